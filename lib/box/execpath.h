/* The workload's exec: its command looked up in the box's PATH as
 * posix_spawnp(3) does, in a process that shares its parent's memory
 * (init's spawn) or not (-t, kern exec). */
#ifndef KERN_EXECPATH_H
#define KERN_EXECPATH_H

#include <limits.h>

/* execv(2) argv[0], searched for in environ's PATH (the caller has made
 * environ the box's) unless it holds a '/'; buf is where each candidate's
 * path is built. Returns only on failure, with the error that ends the
 * search: the first that is not "no such file here" (ENOENT, ENOTDIR and
 * the like go on to the next entry), else EACCES if one entry was not
 * executable, else ENOENT. Unlike execvp(3), a file the kernel cannot run
 * (ENOEXEC: a script without a #! line) is never handed to /bin/sh: it is
 * the error. An empty PATH entry is the working directory; no PATH at all
 * is /usr/local/bin:/bin:/usr/bin. */
int exec_box_path(char **argv, char buf[PATH_MAX]);

#endif
