/* Plumbing from kern-wait to the PID 1 steps of an applet chain (kern-fs,
 * kern-seccomp): the status pipe, the report socket, a shifted box's start
 * socket (idmount.h; -1 otherwise) and the scratch directory travel in
 * KERN_PID1=<status fd>,<report fd>,<start fd>,<scratch>. It
 * carries descriptors and a path, never a claim about enforcement: caps
 * and seccomp come from argv, and the box environment is built from
 * scratch, so the variable never reaches the workload. */
#ifndef KERN_CHAIN_H
#define KERN_CHAIN_H

#include <stddef.h>

#define CHAIN_ENV "KERN_PID1"

struct chain_fds {
	int status_fd;		/* -1 when run standalone */
	int report_fd;
	int idm_fd;		/* -1 unless the box is shifted */
	char scratch[4096];
};

/* Read KERN_PID1; all fields -1/"" when absent or malformed. */
void chain_read(struct chain_fds *c);
/* Set KERN_PID1 in this process's environment (kern-wait's PID 1). */
int chain_export(int status_fd, int report_fd, int idm_fd, const char *scratch);

#endif
