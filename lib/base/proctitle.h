/* The command line a process shows in /proc/PID/cmdline. kern's init is
 * PID 1 of every box, and its argv is kern's own: host paths of -v
 * sources, image references, --env values. Anything in the box may read
 * /proc/1/cmdline (dumpability does not guard it), so init replaces its
 * argv with a short title before the workload exists. */
#ifndef KERN_PROCTITLE_H
#define KERN_PROCTITLE_H

/* Remember where main()'s argv strings lie (call once, from main). */
void proctitle_init(int argc, char **argv);
/* Overwrite those strings in place: /proc/self/cmdline then reads title
 * and nothing else. The argv strings are gone afterwards: a caller that
 * still needs one copies it first. */
void proctitle_set(const char *title);

#endif
