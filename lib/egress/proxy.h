/* The egress proxy's event loop (isolation.md §9.2): one process, one
 * epoll set, every socket non-blocking; up to EGRESS_TUNNELS tunnels, the
 * rest answered 503. */
#ifndef KERN_EGRESS_PROXY_H
#define KERN_EGRESS_PROXY_H

#define EGRESS_TUNNELS 128

/* Serves the box: waits on ctl for the listening socket (egress_attach),
 * acknowledges it with this process's pid, then relays for good. ready()
 * has been sent by the caller. Returns only on a fatal error or when ctl
 * closes before a listener arrived. */
int egress_proxy_run(int ctl, char *const *allow, int nallow);

#endif
