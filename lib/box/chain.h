/* Plumbing from kern-wait to the PID 1 steps of an applet chain (kern-fs,
 * kern-seccomp): the status pipe, the report socket, a shifted box's start
 * socket (idmount.h; -1 otherwise), the caller's signal mask and the
 * scratch directory travel in
 * KERN_PID1=<status fd>,<report fd>,<start fd>,<mask>,<scratch>, the mask
 * as 16 hex digits (bit N-1 for signal N) or "-". PID 1 holds the
 * signals init forwards blocked through every exec of the chain (init.h),
 * so its own mask is not the caller's: init gives the workload this one.
 * The variable carries descriptors, a mask and a path, never a claim about
 * enforcement: caps and seccomp come from argv, and the box environment
 * is built from scratch, so it never reaches the workload. */
#ifndef KERN_CHAIN_H
#define KERN_CHAIN_H

#include <signal.h>
#include <stddef.h>

#define CHAIN_ENV "KERN_PID1"

struct chain_fds {
	int status_fd;		/* -1 when run standalone */
	int report_fd;
	int idm_fd;		/* -1 unless the box is shifted */
	int has_caller_mask;
	sigset_t caller_mask;
	char scratch[4096];
};

/* Read KERN_PID1; all fields -1/"" when absent or malformed. */
void chain_read(struct chain_fds *c);
/* Set KERN_PID1 in this process's environment (kern-wait's PID 1);
 * caller_mask may be NULL. */
int chain_export(int status_fd, int report_fd, int idm_fd, const sigset_t *caller_mask,
		 const char *scratch);

#endif
