/* The --egress-allow policy (isolation.md §9.3): which host names an entry
 * admits. Pure string functions, shared by the proxy, the launcher's
 * argument check and the fuzz target. */
#ifndef KERN_EGRESS_MATCH_H
#define KERN_EGRESS_MATCH_H

#include <stddef.h>

/* Longest host name kern handles: 253 characters plus a trailing dot. */
#define EGRESS_HOST_MAX 254

/* 1 when host (as a client wrote it) is an IP address in any form the
 * resolver would accept as one: dotted quad, the short and hex forms
 * inet_aton() takes (127.1, 0x7f000001), an IPv6 literal, or a name whose
 * last label is all digits. */
int egress_host_is_ip(const char *host);

/* 1 when host is a syntactically usable DNS name: labels of 1-63 letters,
 * digits, '-' or '_', at most 253 characters, one optional trailing dot. */
int egress_host_valid(const char *host);

/* 1 when host is admitted by one of the n entries: case-insensitive, a
 * trailing dot on host or entry and a leading dot on the entry ignored,
 * host == entry or host ends with "." + entry. A host that is not a valid
 * name (egress_host_valid) or is an IP literal is never admitted. */
int egress_host_allowed(const char *host, char *const *allow, int n);

#endif
