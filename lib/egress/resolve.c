/* Resolve-and-vet for the egress proxy. The name is looked up as fully
 * qualified (a trailing dot added), so a resolver search list can never
 * turn an allowed name into some other name. Besides the ranges of the
 * guard, an address of the host itself is refused: a public name pointed
 * at the host's public address would otherwise reach the host's own
 * services from inside the box. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress/guard.h"
#include "egress/match.h"
#include "egress/resolve.h"

/* The IPv4 address an IPv4-mapped IPv6 address carries, for comparing
 * with interface addresses. */
static int mapped_v4(const struct sockaddr_in6 *s6, struct in_addr *out)
{
	if (!IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return 0;
	memcpy(&out->s_addr, s6->sin6_addr.s6_addr + 12, 4);
	return 1;
}

/* 1 when a is configured on an interface of this (the host's) network
 * namespace. When the interfaces cannot be listed, every address counts
 * as local: refusing is the safe answer. */
static int host_address(const struct sockaddr *a)
{
	struct ifaddrs *ifs, *i;
	struct in_addr v4;
	int local = 0, is4 = a->sa_family == AF_INET;
	if (is4)
		v4 = ((const struct sockaddr_in *)a)->sin_addr;
	else if (mapped_v4((const struct sockaddr_in6 *)a, &v4))
		is4 = 1;
	if (getifaddrs(&ifs) < 0)
		return 1;
	for (i = ifs; i && !local; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (is4 && i->ifa_addr->sa_family == AF_INET)
			local = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == v4.s_addr;
		else if (!is4 && i->ifa_addr->sa_family == AF_INET6)
			local = IN6_ARE_ADDR_EQUAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
						   &((const struct sockaddr_in6 *)a)->sin6_addr);
	}
	freeifaddrs(ifs);
	return local;
}

static void set_port(union egress_sockaddr *a, unsigned port)
{
	if (a->sa.sa_family == AF_INET)
		a->in.sin_port = htons((uint16_t)port);
	else
		a->in6.sin6_port = htons((uint16_t)port);
}

#ifdef KERN_TEST_BUILD
/* KERN_EGRESS_TEST_HOSTS=name=ADDR[:PORT],name=[V6][:PORT],... makes each
 * name resolve to the listed addresses instead of asking DNS. A record
 * with a PORT is pinned: the proxy connects to that port whatever the
 * client asked for, and when its address is loopback it is exempt from
 * the guard, so tests can reach local servers. Every other record is
 * vetted like a DNS answer. Only the test build reads this variable. */
struct test_host {
	char name[EGRESS_HOST_MAX + 1];
	union egress_sockaddr addr;
	unsigned port;		/* 0: the port the client asked for */
};

static struct test_host test_hosts[64];
static int ntest_hosts;

static int parse_test_host(char *item, struct test_host *t)
{
	char *eq = strchr(item, '='), *addr, *port = NULL;
	if (!eq || eq == item || (size_t)(eq - item) > EGRESS_HOST_MAX)
		return -1;
	*eq = 0;
	strcpy(t->name, item);
	for (char *p = t->name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	addr = eq + 1;
	if (addr[0] == '[') {
		char *close = strchr(addr, ']');
		if (!close)
			return -1;
		*close = 0;
		addr++;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return -1;
	} else if ((port = strchr(addr, ':'))) {
		*port++ = 0;
	}
	memset(&t->addr, 0, sizeof t->addr);
	if (inet_pton(AF_INET, addr, &t->addr.in.sin_addr) == 1)
		t->addr.in.sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &t->addr.in6.sin6_addr) == 1)
		t->addr.in6.sin6_family = AF_INET6;
	else
		return -1;
	t->port = 0;
	if (port) {
		char *end;
		unsigned long v = strtoul(port, &end, 10);
		if (*port == 0 || *end || v == 0 || v > 65535)
			return -1;
		t->port = (unsigned)v;
	}
	return 0;
}

void egress_resolve_init(void)
{
	const char *v = getenv("KERN_EGRESS_TEST_HOSTS");
	char *copy, *save = NULL;
	if (!v || !*v || !(copy = strdup(v)))
		return;
	for (char *item = strtok_r(copy, ",", &save); item && ntest_hosts < 64;
	     item = strtok_r(NULL, ",", &save))
		if (parse_test_host(item, &test_hosts[ntest_hosts]) == 0)
			ntest_hosts++;
	free(copy);
}

static int is_loopback(const union egress_sockaddr *a)
{
	if (a->sa.sa_family == AF_INET)
		return (ntohl(a->in.sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&a->in6.sin6_addr);
}

/* 1 when host is a test name (the answer, possibly a refusal, is in rc). */
static int resolve_test(const char *host, unsigned port, struct egress_addrs *out, int *rc)
{
	size_t len = strlen(host);
	int found = 0;
	if (len > 0 && host[len - 1] == '.')
		len--;
	*rc = 0;
	for (int i = 0; i < ntest_hosts; i++) {
		const struct test_host *t = &test_hosts[i];
		if (strlen(t->name) != len || strncasecmp(t->name, host, len) != 0)
			continue;
		found = 1;
		int exempt = t->port && is_loopback(&t->addr);
		if (!exempt && (!egress_addr_public(&t->addr.sa) || host_address(&t->addr.sa)))
			*rc = -1;
		if (out->n < EGRESS_ADDRS_MAX) {
			out->a[out->n] = t->addr;
			set_port(&out->a[out->n], t->port ? t->port : port);
			out->n++;
		}
	}
	if (found && *rc < 0)
		out->n = 0;
	return found;
}
#else
void egress_resolve_init(void)
{
}
#endif

int egress_resolve(const char *host, unsigned port, struct egress_addrs *out)
{
	struct addrinfo hints, *res = NULL;
	char fqdn[EGRESS_HOST_MAX + 2];
	size_t len = strlen(host);
	int refused = 0;

	out->n = 0;
#ifdef KERN_TEST_BUILD
	int rc;
	if (resolve_test(host, port, out, &rc))
		return out->n > 0 ? rc : -1;
#endif
	if (len == 0 || len > EGRESS_HOST_MAX)
		return -1;
	memcpy(fqdn, host, len + 1);
	if (fqdn[len - 1] != '.') {
		fqdn[len] = '.';
		fqdn[len + 1] = 0;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(fqdn, NULL, &hints, &res) != 0)
		return -1;
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(union egress_sockaddr) || !egress_addr_public(ai->ai_addr) ||
		    host_address(ai->ai_addr)) {
			refused = 1;
			break;
		}
		if (out->n < EGRESS_ADDRS_MAX) {
			memset(&out->a[out->n], 0, sizeof out->a[out->n]);
			memcpy(&out->a[out->n], ai->ai_addr, ai->ai_addrlen);
			set_port(&out->a[out->n], port);
			out->n++;
		}
	}
	freeaddrinfo(res);
	if (refused || out->n == 0) {
		out->n = 0;
		return -1;
	}
	return 0;
}
