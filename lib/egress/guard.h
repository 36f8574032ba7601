/* The SSRF guard of isolation.md §9.3: which resolved addresses the egress
 * proxy may connect to. */
#ifndef KERN_EGRESS_GUARD_H
#define KERN_EGRESS_GUARD_H

#include <stdint.h>
#include <sys/socket.h>

/* 1 when a (host-order) IPv4 address is public. */
int egress_v4_public(uint32_t a);
/* 1 when a 16-byte IPv6 address is public; the IPv4-mapped, -compatible,
 * -translated, 64:ff9b::/96 and 2002::/16 forms are judged by the IPv4
 * address they embed. */
int egress_v6_public(const uint8_t a[16]);
/* 1 when sa is an AF_INET or AF_INET6 address that is public; 0 for any
 * other family. */
int egress_addr_public(const struct sockaddr *sa);

#endif
