/* The processes of a running box, found from its box record and held
 * as pidfds that were verified against pid reuse (box-cli.md §7.1,
 * isolation.md §8.2): `kern stop` signals them, `kern exec` joins their
 * namespaces. A pid whose identity cannot be proved is never touched. */
#ifndef KERN_BOXPROC_H
#define KERN_BOXPROC_H

#include <sys/types.h>

#include "state/records.h"

struct box_procs {
	int sup_fd;		/* the supervisor: recorded pid AND start time, alive */
	pid_t pid1;		/* host pid of kern's init, 0 when unknown */
	int pid1_fd;		/* -1 unless pid1 is the supervisor's child and init of a pid ns */
	pid_t work;		/* the workload: init's oldest child, 0 when none */
	int work_fd;		/* -1 unless work is init's child */
};

/* Open what can be proved of rec's box. Returns 0 with at least sup_fd, or
 * -1 when the supervisor is not the recorded process (dead, a zombie, or
 * its pid reused): then nothing may be signalled. */
int box_procs_open(const struct box_record *rec, struct box_procs *bp);
void box_procs_close(struct box_procs *bp);

/* 1 once the process behind pidfd fd has exited (or fd is -1). */
int pidfd_exited(int fd);
/* Wait up to ms milliseconds for it to exit; 1 when it did. */
int pidfd_wait_exit(int fd, int ms);
/* pidfd_send_signal(2); -1 with errno. */
int pidfd_signal(int fd, int sig);

/* 1 when pid exists and is not a zombie. */
int proc_running(pid_t pid);
/* 1 when pid has a handler for sig (SigCgt in /proc/<pid>/status). */
int proc_catches(pid_t pid, int sig);
/* 1 when pid runs the same executable file as this process (a kern
 * supervisor does): compared by device and inode of /proc/<pid>/exe. */
int proc_is_kern(pid_t pid);
/* 1 when PID 1 of the box finished its setup: its seccomp filter is
 * installed, which it does last before forking the workload. */
int proc_seccomp_on(pid_t pid);

#endif
