/* How one applet continues into the next: a `kern-*` step is executed from
 * a descriptor to kern's own image opened at start (never PATH, never a
 * path inside a box); anything else is the command and goes through
 * execvp. */
#ifndef KERN_SELFEXEC_H
#define KERN_SELFEXEC_H

/* Open /proc/self/exe (O_PATH) once; kern-fs calls it before pivot_root. */
int self_exe_fd(void);

/* Execute argv (the part after an applet's `--`). Returns only on failure,
 * with errno set. */
int exec_next(char **argv);

/* Split argv at the first `--`: returns the index after it, or -1. */
int split_dashdash(int argc, char **argv);

#endif
