/* The supervisor (kern-wait; isolation.md §2.5, §8): forks PID 1 into the
 * box cgroup, watches the deadline, signals and OOM, reaps, tears down in
 * the spec's order and writes the outcome bytes. */
#ifndef KERN_SUPERVISE_H
#define KERN_SUPERVISE_H

#include "cgroup.h"
#include "registry.h"

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
	/* Runs in PID 1 with its status pipe (already diag_status_fd) and
	 * report socket; never returns. */
	void (*pid1)(void *ctx, int report_fd);
	void *ctx;
};

/* Returns the box's exit status (box-cli.md §6.1). */
int supervise(struct supervisor *s);

/* The OOM sentence of box-cli.md §6.2. */
extern const char oom_sentence[];

#endif
