/* The egress proxy of --egress-allow (isolation.md §9): the box keeps its
 * own network namespace with only lo; a listener on 127.0.0.1:3128 inside
 * it is served by a proxy process in the host network namespace that
 * reaches the allowed domains and nothing else.
 *
 * Shape: egress_start() forks the proxy in host namespaces; after the
 * caller has unshared its network namespace, egress_attach() creates the
 * listener there and passes it to the proxy (SCM_RIGHTS), which accepts box
 * connections on it and connects out from the host namespace. No socket
 * file, no second process. */
#ifndef KERN_EGRESS_H
#define KERN_EGRESS_H

#include <sys/types.h>

struct cg_box;

#define EGRESS_PROXY_URL "http://127.0.0.1:3128"

/* Between applets of a chain: kern-egress leaves the control descriptor
 * open under this variable's number; `kern-egress --attach` exports the
 * proxy's pid under the second, for the supervisor's teardown. */
#define EGRESS_FD_ENV "KERN_EGRESS_FD"
#define EGRESS_PID_ENV "KERN_EGRESS_PID"

struct egress_config {
	char *const *allow;	/* validated domain entries */
	int nallow;
	const char *runtime;	/* kern's runtime dir (unused: no socket file) */
	const char *name;	/* box name (unused: the process is "kern-egress") */
	struct cg_box *cg;	/* charge the proxy to the box (may be NULL or uncapped) */
};

/* Box-cli.md §2.1 grammar of one --egress-allow entry: LDH labels of 1-63
 * characters without a leading or trailing '-', at most 253 characters,
 * at least one dot; one leading and one trailing dot tolerated (matching
 * ignores them); nothing an address parser would read as an IP. */
int egress_domain_valid(const char *d);

/* Step 8, in host namespaces before kern-ns: fork the proxy (setsid,
 * PDEATHSIG tied to the caller's thread, every other descriptor closed,
 * stdio on /dev/null, uid 65534 when started as root). On success returns
 * 0 and sets *ctl (FD_CLOEXEC), which must survive until egress_attach().
 * On failure prints `kern: warning: egress filter failed to start (<why>);
 * the box has NO outbound` and returns -1: the box then runs with no route
 * at all. The proxy is a child of the caller: reap it only through
 * egress_stop(), never with a wait for any child. */
int egress_start(const struct egress_config *cfg, int *ctl);

/* After unshare(CLONE_NEWNET), before PID 1 is forked: create the
 * 127.0.0.1:3128 listener in the caller's (the box's) network namespace,
 * bring lo up, and hand the listener to the proxy. Closes ctl and keeps no
 * copy of the listener. Returns the proxy's pid (for egress_stop), or -1
 * with the warning above printed. */
pid_t egress_attach(int ctl);

/* Teardown (isolation.md §8.4 step 2): SIGKILL the proxy and reap it.
 * A pid <= 0 is ignored. */
void egress_stop(pid_t proxy);

/* Teardown step 2 (isolation.md §8.4): kill and reap the proxy started by
 * egress_start() in this process, if any. */
void egress_stop(void);

#endif
