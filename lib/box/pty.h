/* The box's side of -t/--tty (kern box, kern exec): a pseudo-terminal from
 * a devpts instance of the box's own, never the host's, whose slave
 * becomes the controlling terminal of the workload. The master goes to
 * the host-side relay (ttyrelay.h). */
#ifndef KERN_PTY_H
#define KERN_PTY_H

#include <stddef.h>

/* The one-byte tag of the message on init's report socket that carries
 * the master to the supervisor. */
#define PTY_TAG 'T'

/* The options of the box's devpts: a private instance whose ptmx any box
 * user may open, ptys readable and writable by their owner, writable by
 * the group. */
#define PTY_DEVPTS_OPTS "newinstance,ptmxmode=0666,mode=0620"

/* /dev/pts of the current root when it is a devpts mount (walked without
 * following any link), as an O_PATH descriptor; -1 (errno) otherwise. */
int pty_devpts_dir(void);
/* A fresh devpts instance, never attached anywhere (fsopen/fsmount), as a
 * descriptor of its root; -1 (errno). Needs CAP_SYS_ADMIN over the
 * current mount namespace. */
int pty_devpts_detached(void);

/* A new pty of the devpts instance at dir: *master (close-on-exec) and
 * *slave (not a controlling terminal of anyone yet). When term_fd is a
 * terminal, the slave starts with its modes and window size. uid >= 0:
 * the slave is chowned to it (the workload's user). Returns 0, or -1 with
 * why filled in (the failing call). */
int pty_open(int dir, int term_fd, long uid, int *master, int *slave, char *why, size_t len);

/* In the workload's process, before its exec: a new session whose
 * controlling terminal is slave, which becomes fds 0, 1 and 2. Returns 0,
 * or -1 (errno). */
int pty_take(int slave);

#endif
