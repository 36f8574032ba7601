/* The egress proxy of --egress-allow (isolation.md §9): the box keeps its
 * own network namespace with only lo; a listener on 127.0.0.1:3128 inside
 * it is served by a proxy process in the host network namespace that
 * reaches the allowed domains and nothing else. */
#ifndef KERN_EGRESS_H
#define KERN_EGRESS_H

#include <sys/types.h>

struct cg_box;

#define EGRESS_PROXY_URL "http://127.0.0.1:3128"

struct egress_config {
	char *const *allow;	/* validated domain entries */
	int nallow;
	const char *runtime;	/* kern's runtime dir, for any socket */
	const char *name;	/* box name, for process titles and sockets */
	struct cg_box *cg;	/* charge the proxy to the box (may be uncapped) */
};

/* Box-cli.md §2.1 grammar of one --egress-allow entry. */
int egress_domain_valid(const char *d);

/* Step 8, in host namespaces before kern-ns: fork the proxy (setsid,
 * PDEATHSIG, every other descriptor closed). On success returns 0 and sets
 * *ctl, a descriptor that must survive until egress_attach(). On failure
 * prints `kern: warning: egress filter failed to start (<why>); the box has
 * NO outbound` and returns -1: the box then runs with no route at all. */
int egress_start(const struct egress_config *cfg, int *ctl);

/* After unshare(CLONE_NEWNET), before PID 1 is forked: create the
 * 127.0.0.1:3128 listener in the box's network namespace and hand it to
 * the proxy. Closes ctl. Returns 0 or -1 (warning printed as above). */
int egress_attach(int ctl);

/* Teardown step 2 (isolation.md §8.4): kill and reap the proxy started by
 * egress_start() in this process, if any. */
void egress_stop(void);

#endif
