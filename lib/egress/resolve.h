/* Name resolution for the egress proxy (isolation.md §9.3): resolve a name
 * once, refuse it entirely when any address is non-public, and hand back
 * the vetted addresses, the only ones the proxy ever connects to. */
#ifndef KERN_EGRESS_RESOLVE_H
#define KERN_EGRESS_RESOLVE_H

#include <netinet/in.h>
#include <sys/socket.h>

#define EGRESS_ADDRS_MAX 16

union egress_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

struct egress_addrs {
	int n;
	union egress_sockaddr a[EGRESS_ADDRS_MAX];	/* port filled in */
};

/* Reads the test build's KERN_EGRESS_TEST_HOSTS (a no-op in release
 * builds). Call once, before any thread exists. */
void egress_resolve_init(void);

/* Resolves host (a valid, allowed, non-literal name) for port. Returns 0
 * with out->n >= 1, or -1 when the name does not resolve or any of its
 * addresses is non-public. Blocking: runs on a resolver thread. */
int egress_resolve(const char *host, unsigned port, struct egress_addrs *out);

#endif
