/* Entry validation and the allowlist match of isolation.md §9.3. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "egress/egress.h"
#include "egress/match.h"

static int is_ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* Checks the labels of s[0..len): 1-63 characters each, from is_ldh plus
 * '_' when allow_underscore; entries (allow_underscore = 0) also refuse a
 * label that starts or ends with '-'. Returns the number of dots, or -1. */
static int labels_ok(const char *s, size_t len, int allow_underscore)
{
	size_t label = 0;
	int dots = 0;
	if (len == 0 || len > 253)
		return -1;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? s[i] : '.';
		if (c == '.') {
			if (label == 0)
				return -1;
			if (!allow_underscore && s[i - 1] == '-')
				return -1;
			if (i < len)
				dots++;
			label = 0;
			continue;
		}
		if (!is_ldh(c) && !(allow_underscore && c == '_'))
			return -1;
		if (label == 0 && c == '-' && !allow_underscore)
			return -1;
		if (++label > 63)
			return -1;
	}
	return dots;
}

/* The last label of s[0..len) is all digits: no TLD is, and the resolver
 * would read such a name as an address. */
static int last_label_numeric(const char *s, size_t len)
{
	size_t i = len;
	while (i > 0 && s[i - 1] != '.')
		i--;
	if (i == len)
		return 0;
	for (size_t j = i; j < len; j++)
		if (s[j] < '0' || s[j] > '9')
			return 0;
	return 1;
}

int egress_host_is_ip(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	char core[EGRESS_HOST_MAX + 1];
	size_t len = strlen(host);
	if (len > 0 && host[len - 1] == '.')
		len--;
	if (len == 0 || len >= sizeof core)
		return 0;
	memcpy(core, host, len);
	core[len] = 0;
	return inet_aton(core, &a4) == 1 || inet_pton(AF_INET6, core, &a6) == 1 ||
	       last_label_numeric(core, len);
}

int egress_host_valid(const char *host)
{
	size_t len = strlen(host);
	if (len > 0 && host[len - 1] == '.')
		len--;
	return labels_ok(host, len, 1) >= 0;
}

int egress_domain_valid(const char *d)
{
	size_t len = strlen(d);
	char core[EGRESS_HOST_MAX + 1];
	/* One leading and one trailing dot are tolerated: matching ignores them. */
	if (len > 0 && d[0] == '.') {
		d++;
		len--;
	}
	if (len > 0 && d[len - 1] == '.')
		len--;
	if (labels_ok(d, len, 0) < 1)
		return 0;
	memcpy(core, d, len);
	core[len] = 0;
	return !egress_host_is_ip(core);
}

int egress_host_allowed(const char *host, char *const *allow, int n)
{
	size_t hlen = strlen(host);
	if (!egress_host_valid(host) || egress_host_is_ip(host))
		return 0;
	if (hlen > 0 && host[hlen - 1] == '.')
		hlen--;
	for (int i = 0; i < n; i++) {
		const char *e = allow[i];
		size_t elen = strlen(e);
		if (elen > 0 && e[0] == '.') {
			e++;
			elen--;
		}
		if (elen > 0 && e[elen - 1] == '.')
			elen--;
		if (elen == 0)
			continue;
		if (hlen == elen && strncasecmp(host, e, elen) == 0)
			return 1;
		if (hlen > elen + 1 && host[hlen - elen - 1] == '.' &&
		    strncasecmp(host + hlen - elen, e, elen) == 0)
			return 1;
	}
	return 0;
}
