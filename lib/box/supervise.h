/* The supervisor (kern-wait and kern box; isolation.md §2.5, §8): starts
 * PID 1 in the box cgroup, watches the deadline, signals and OOM, reaps,
 * tears down in the spec's order and writes the outcome bytes. */
#ifndef KERN_SUPERVISE_H
#define KERN_SUPERVISE_H

#include "cgroup/cgroup.h"
#include "state/records.h"

struct supervisor {
	const char *runtime;		/* for the registry record */
	struct box_record *rec;		/* claimed record, or NULL */
	const char *scratch;		/* removed at teardown, or NULL */
	struct cg_box *cg;
	unsigned long long timeout;	/* seconds; 0 = none */
	int started_fd;			/* KERN_STARTED_FD or -1 */
	int alive_fd;			/* KERN_ALIVE_FD or -1 */
	int detach_fd;			/* -d: the waiting launcher, or -1 */
	int chain;			/* PID 1 execs the next applet: pipes must survive exec */
	int tty;			/* -t: relay the pty PID 1 sends (ttyrelay.h) */
	/* kern-oci's --console-socket: -t's pty master goes to console_fd
	 * (SCM_RIGHTS), for the engine to relay, instead of the relay here. */
	int to_console, console_fd;
	/* Runs in PID 1 with its status pipe (already diag_status_fd) and
	 * report socket; never returns. */
	void (*pid1)(void *ctx, int report_fd);
	void *ctx;
	/* kern box: when set, PID 1 is cloned straight into new namespaces
	 * (clone_flags) while the supervisor stays in the host's, and this
	 * runs in the supervisor right after: PID 1's id maps, PID 1 into
	 * s->cg, egress. Returns 0, nonzero after printing why, or
	 * SUPERVISE_STOPPED (nothing printed) when supervise_wait() gave up. */
	int (*prepare)(struct supervisor *s, pid_t pid1);
	int clone_flags;
	/* For prepare: supervise()'s end of PID 1's report socket, and work
	 * PID 1 needs only after its root is built, done while the supervisor
	 * waits on it (idm_serve) or else when prepare is done with it; 0, or
	 * -1 printed. */
	int report;
	int (*idle)(struct supervisor *s);
	/* supervise()'s own, for prepare: the stop signals' and the deadline's
	 * descriptors, and what ended the start (0, a signal number, or -1
	 * for the deadline). */
	int sigfd, tfd;
	int stopped;
	/* In: nonzero when root's --userns=auto skipped its probe, so a
	 * refused CLONE_NEWUSER is no failure but a reason to start again
	 * without one. Out: the refusal's errno, when that happened (nothing
	 * printed, everything made undone, SUPERVISE_RETRY returned). */
	int userns_unprobed;
};

#define SUPERVISE_STOPPED (-2)
#define SUPERVISE_RETRY (-3)

/* Returns the box's exit status (box-cli.md §6.1). */
int supervise(struct supervisor *s);

/* For prepare, before each blocking read of PID 1's: 0 once fd is readable
 * (or at its end); -1 with errno ECANCELED once a stop signal or the
 * deadline came first (recorded in s->stopped): a PID 1 that stalls in its
 * setup never makes the supervisor deaf to them. s NULL: 0 at once. */
int supervise_wait(struct supervisor *s, int fd);
/* For prepare: s->idle, once (it is cleared first); 0 when there is none
 * or it did its work, -1 printed. */
int supervise_idle(struct supervisor *s);

/* The OOM sentence of box-cli.md §6.2. */
extern const char oom_sentence[];

#endif
