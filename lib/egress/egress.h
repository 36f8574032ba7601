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
	struct cg_box *cg;	/* charge the proxy to the box (may be NULL or uncapped) */
};

/* Box-cli.md §2.1 grammar of one --egress-allow entry: LDH labels of 1-63
 * characters without a leading or trailing '-', at most 253 characters,
 * at least one dot; one leading and one trailing dot tolerated (matching
 * ignores them); nothing an address parser would read as an IP. */
int egress_domain_valid(const char *d);

/* Step 8, in host namespaces before kern-ns: fork the proxy (setsid,
 * PDEATHSIG tied to the caller's thread, every other descriptor closed,
 * stdio on /dev/null, no capability, uid 65534 when started by host root).
 * On success returns 0 and sets *ctl (FD_CLOEXEC), which must survive
 * until egress_attach(). On failure prints `kern: warning: egress filter
 * failed to start (<why>); the box has NO outbound` and returns -1: the box
 * then runs with no route at all. The proxy is a child of the caller: reap
 * it only through egress_stop(), never with a wait for any child. */
int egress_start(const struct egress_config *cfg, int *ctl);

/* After unshare(CLONE_NEWNET), before PID 1 is forked: create the
 * 127.0.0.1:3128 listener in the caller's (the box's) network namespace,
 * bring lo up, and hand the listener to the proxy, keeping no copy.
 * ctl then stays open as the proxy's lifeline: the proxy exits when its
 * last copy closes (a supervisor that became root of a user namespace may
 * not signal a proxy that dropped to uid 65534). Its close-on-exec flag is
 * left as it is, so an applet chain can carry it into kern-wait; the
 * proxy's pid goes into this process's KERN_EGRESS_PID for the same
 * reason. Returns 0, or -1 with the warning above printed and ctl closed. */
int egress_attach(int ctl);

/* egress_attach() in two halves, for kern box, whose PID 1 is cloned
 * straight into the box's network namespace while the supervisor stays
 * outside. egress_listen() runs in PID 1: it creates the listener and
 * brings lo up, returning the socket, or -1 with errno and *stage (which
 * step failed) set. egress_hand_over() runs in the process that started
 * the proxy: it hands the listener over (closing it), or, when listener
 * is -1, gives up with the warning above for stage and err. Returns as
 * egress_attach(). */
enum { EGRESS_LISTEN_SOCKET, EGRESS_LISTEN_BIND, EGRESS_LISTEN_LO };
int egress_listen(int *stage);
int egress_hand_over(int ctl, int listener, int stage, int err);

/* Teardown step 2 (isolation.md §8.4): close the lifeline, SIGKILL the
 * proxy and reap it (waiting at most 2 s). Works in the process that
 * called egress_start()/egress_attach(), and after an exec through
 * KERN_EGRESS_FD and KERN_EGRESS_PID (the pid is only trusted when it is
 * our own kern-egress child). A no-op when there is no proxy. */
void egress_stop(void);

#endif
