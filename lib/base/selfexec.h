/* How one applet continues into the next: a `kern-*` step (or `kern`
 * itself) is executed from a descriptor to kern's own image opened at
 * start (never PATH, never a path inside a box); anything else is the
 * command and goes through execvp. */
#ifndef KERN_SELFEXEC_H
#define KERN_SELFEXEC_H

/* Open /proc/self/exe (O_PATH) once; kern-fs calls it before pivot_root. */
int self_exe_fd(void);

/* What argv0 names by its basename: "X" for `kern-X`, "" for `kern`
 * itself (the applet is then the next word), NULL for anything else.
 * The dispatcher, exec_next() and kern-ns's check of what comes next all
 * read a name this one way. */
const char *kern_applet_of(const char *argv0);

/* Execute argv (the part after an applet's `--`). A bare `kern` or
 * `kern-X` (no slash) runs from self_exe_fd(). Returns only on failure,
 * with errno set. */
int exec_next(char **argv);

#endif
