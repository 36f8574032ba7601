/* Address classification for the egress proxy. A name is refused when ANY
 * of its addresses is non-public, so this errs towards "non-public": the
 * MUST ranges of isolation.md §9.3, its SHOULD ranges, and the few other special-use
 * blocks no public service lives in. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "egress/guard.h"

struct v4_range {
	uint32_t net;
	unsigned bits;
};

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

static const struct v4_range v4_refused[] = {
	{V4(0, 0, 0, 0), 8},		/* "this network" */
	{V4(10, 0, 0, 0), 8},		/* private */
	{V4(100, 64, 0, 0), 10},	/* carrier-grade NAT */
	{V4(127, 0, 0, 0), 8},		/* loopback */
	{V4(169, 254, 0, 0), 16},	/* link-local, cloud metadata */
	{V4(172, 16, 0, 0), 12},	/* private */
	{V4(192, 0, 0, 0), 24},		/* IETF protocol assignments */
	{V4(192, 0, 2, 0), 24},		/* TEST-NET-1 (SHOULD) */
	{V4(192, 88, 99, 0), 24},	/* 6to4 relay anycast, deprecated */
	{V4(192, 168, 0, 0), 16},	/* private */
	{V4(198, 18, 0, 0), 15},	/* benchmarking */
	{V4(198, 51, 100, 0), 24},	/* TEST-NET-2 (SHOULD) */
	{V4(203, 0, 113, 0), 24},	/* TEST-NET-3 (SHOULD) */
	{V4(224, 0, 0, 0), 4},		/* multicast */
	{V4(240, 0, 0, 0), 4},		/* reserved, and 255.255.255.255 */
};

int egress_v4_public(uint32_t a)
{
	for (size_t i = 0; i < sizeof v4_refused / sizeof v4_refused[0]; i++) {
		uint32_t mask = ~(uint32_t)0 << (32 - v4_refused[i].bits);
		if ((a & mask) == v4_refused[i].net)
			return 0;
	}
	return 1;
}

static uint32_t v4_at(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* 1 when the first bits of a equal those of prefix. */
static int in6(const uint8_t a[16], const uint8_t *prefix, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;
	if (memcmp(a, prefix, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & mask) == (prefix[whole] & mask);
}

int egress_v6_public(const uint8_t a[16])
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	static const uint8_t sixto4[2] = {0x20, 0x02};
	static const uint8_t teredo[4] = {0x20, 0x01, 0x00, 0x00};
	static const uint8_t doc[4] = {0x20, 0x01, 0x0d, 0xb8};
	static const uint8_t doc2[4] = {0x3f, 0xff, 0x00, 0x00};
	static const uint8_t bench[6] = {0x20, 0x01, 0x00, 0x02, 0x00, 0x00};
	static const uint8_t orchid[4] = {0x20, 0x01, 0x00, 0x10};
	static const uint8_t orchid2[4] = {0x20, 0x01, 0x00, 0x20};
	static const uint8_t global[1] = {0x20};

	/* ::/96 holds ::, ::1 and the IPv4-compatible form; all are judged as
	 * IPv4 (0.0.0.0/8 covers :: and ::1). */
	if (in6(a, zero, 96) || in6(a, mapped, 96) || in6(a, translated, 96) || in6(a, nat64, 96))
		return egress_v4_public(v4_at(a + 12));
	if (in6(a, sixto4, 16))
		return egress_v4_public(v4_at(a + 2));
	/* Only global unicast (2000::/3) is public: this also refuses
	 * fc00::/7, fe80::/10, fec0::/10, ff00::/8, 100::/64 and the local-use
	 * NAT64 prefix 64:ff9b:1::/48. */
	if (!in6(a, global, 3))
		return 0;
	if (in6(a, teredo, 32) || in6(a, doc, 32) || in6(a, doc2, 20) ||
	    in6(a, bench, 48) || in6(a, orchid, 28) || in6(a, orchid2, 28))
		return 0;
	return 1;
}

int egress_addr_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		return egress_v4_public(ntohl(s4->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		return egress_v6_public(s6->sin6_addr.s6_addr);
	}
	return 0;
}
