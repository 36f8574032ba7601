/* A few resolver threads for the egress proxy: getaddrinfo() blocks, and
 * one slow name must not stall every other tunnel of the box. The event
 * loop submits jobs and reads finished ones from a pipe. */
#ifndef KERN_EGRESS_POOL_H
#define KERN_EGRESS_POOL_H

#include "egress/match.h"
#include "egress/resolve.h"

struct egress_job {
	char host[EGRESS_HOST_MAX + 1];		/* in */
	unsigned port;				/* in */
	int rc;					/* out: egress_resolve()'s result */
	struct egress_addrs addrs;		/* out */
	unsigned slot, gen;			/* the submitter's, untouched */
	int cancelled;				/* set by egress_pool_cancel() */
	struct egress_job *next;
};

/* Starts one thread, and allows up to n as names wait for an answer.
 * Returns the read end (non-blocking) of the pipe that carries finished
 * jobs, or -1 with errno set. */
int egress_pool_start(int n);
/* Queues j; it comes back through egress_pool_done(), cancelled or not. */
void egress_pool_submit(struct egress_job *j);
/* The submitter no longer wants j's answer; a job not yet started is not
 * resolved at all. j still comes back and is the submitter's to free. */
void egress_pool_cancel(struct egress_job *j);
/* One finished job, or NULL when none is ready. */
struct egress_job *egress_pool_done(void);

#endif
