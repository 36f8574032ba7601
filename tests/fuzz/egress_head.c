/* FZ-6: the egress request-head scanner, parser and authority rules on
 * arbitrary bytes. Properties: no crash or undefined behaviour; feeding a
 * head in two pieces finds the same end as feeding it whole; a parsed host
 * occurs in the head as the client wrote it; and the proxy's decision
 * never admits a host that an independent, label-by-label reference
 * matcher rejects; and a plain request's forwarded head (origin form,
 * egress_head_forward) carries exactly the host and port that were
 * checked, one Host, no hop-by-hop field, the same body framing, and is
 * what forwarding it again gives. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress/head.h"
#include "egress/match.h"

static char *const allow[] = {"pypi.org", ".example.com.", "a-b.c0", "x.y"};
#define NALLOW 4

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static void fail(const char *why, const char *host)
{
	fprintf(stderr, "FZ-6 property broken: %s (host '%s')\n", why, host);
	abort();
}

/* Splits s (lower-cased, one trailing dot dropped) into labels; returns
 * their number, or -1 when s is not a plain name: an empty label, a
 * character outside [a-z0-9_-], or more than 127 labels. */
static int labels(const char *s, char out[128][64])
{
	size_t len = strlen(s), n = 0, k = 0;
	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return -1;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? lower(s[i]) : '.';
		if (c == '.') {
			if (k == 0 || n >= 128)
				return -1;
			out[n++][k] = 0;
			k = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') || k >= 63)
			return -1;
		out[n][k++] = c;
	}
	return (int)n;
}

/* The reference: the host's last labels equal all of an entry's labels,
 * and the host's last label is not numeric. */
static int reference_allows(const char *host)
{
	static char h[128][64], e[128][64];
	int nh = labels(host, h);
	if (nh < 1 || strspn(h[nh - 1], "0123456789") == strlen(h[nh - 1]))
		return 0;
	for (int i = 0; i < NALLOW; i++) {
		const char *entry = allow[i] + (allow[i][0] == '.');
		int ne = labels(entry, e);
		if (ne < 1 || ne > nh)
			continue;
		int same = 1;
		for (int j = 1; j <= ne && same; j++)
			same = strcmp(h[nh - j], e[ne - j]) == 0;
		if (same)
			return 1;
	}
	return 0;
}

/* Lines of a head whose field name is name (case-insensitive). */
static int count_field(const char *h, size_t n, const char *name)
{
	size_t m = strlen(name);
	int c = 0;
	for (size_t i = 0; i + 2 + m < n; i++)
		if (h[i] == '\r' && h[i + 1] == '\n' && !strncasecmp(h + i + 2, name, m) && h[i + 2 + m] == ':')
			c++;
	return c;
}

/* The head a plain request is forwarded with: origin form, one Host that
 * is the checked authority, no hop-by-hop field but a final Connection:
 * close, the same body framing; forwarding it again changes nothing. */
static void check_forward(const char *head, size_t len, const struct egress_request *r)
{
	static char out[EGRESS_FORWARD_MAX], again[EGRESS_FORWARD_MAX];
	struct egress_request f;
	size_t end = 0;
	size_t n = egress_head_forward(head, len, r, out, sizeof out);
	if (n == 0)
		fail("a parsed head does not fit EGRESS_FORWARD_MAX forwarded", r->host);
	if (egress_head_scan(out, 0, n, &end) != EGRESS_HEAD_DONE || end != n)
		fail("the forwarded head does not end where it should", r->host);
	if (egress_head_parse(out, n, &f) != 0)
		fail("the forwarded head does not parse", r->host);
	if (f.is_connect || strcmp(f.host, r->host) != 0 || f.port != r->port || f.length != r->length ||
	    f.chunked != r->chunked)
		fail("the forwarded head names another host, port or body", r->host);
	if (out[f.target_off] != '/' && !(f.target_len == 1 && out[f.target_off] == '*'))
		fail("the forwarded request line is not in origin form", r->host);
	static const char *const gone[] = {"proxy-connection", "keep-alive", "te", "upgrade",
					   "proxy-authorization"};
	for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
		if (count_field(out, n, gone[i]))
			fail("a hop-by-hop field was forwarded", gone[i]);
	static const char last[] = "\r\nConnection: close\r\n\r\n";
	if (count_field(out, n, "host") != 1 || count_field(out, n, "connection") != 1 ||
	    n < sizeof last - 1 || memcmp(out + n - (sizeof last - 1), last, sizeof last - 1) != 0)
		fail("the forwarded head lacks its one Host or its final Connection: close", r->host);
	size_t n2 = egress_head_forward(out, n, &f, again, sizeof again);
	if (n2 != n || memcmp(out, again, n) != 0)
		fail("forwarding the forwarded head changes it", r->host);
}

/* Case-insensitive search of needle in hay[0..n). */
static int contains(const uint8_t *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; i + m <= n; i++) {
		size_t j = 0;
		while (j < m && lower((char)hay[i + j]) == needle[j])
			j++;
		if (j == m)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	size_t end = 0, end2 = 0;
	struct egress_request r;

	if (size > 2 * EGRESS_HEAD_MAX)
		return 0;
	/* The authority rules on their own. */
	if (egress_authority(buf, size, 443, &r) == 0) {
		if (strlen(r.host) == 0 || r.port == 0 || r.port > 65535)
			fail("authority gave an empty host or a bad port", r.host);
		if (!r.bracketed && !contains(data, size, r.host))
			fail("authority host is not in the input", r.host);
	}

	size_t limit = size < EGRESS_HEAD_MAX ? size : EGRESS_HEAD_MAX;
	enum egress_scan whole = egress_head_scan(buf, 0, limit, &end);
	size_t split = size > 0 ? data[0] % (limit + 1) : 0;
	enum egress_scan part = egress_head_scan(buf, 0, split, &end2);
	if (part == EGRESS_HEAD_MORE)
		part = egress_head_scan(buf, split, limit, &end2);
	if (part != whole || (whole == EGRESS_HEAD_DONE && end != end2))
		fail("scanning in two pieces disagrees with scanning whole", "");
	if (whole != EGRESS_HEAD_DONE)
		return 0;
	if (end < 4 || memcmp(buf + end - 4, "\r\n\r\n", 4) != 0)
		fail("the head does not end with CRLFCRLF", "");

	if (egress_head_parse(buf, end, &r) != 0)
		return 0;
	if (r.port == 0 || r.port > 65535 || strlen(r.host) == 0 || strlen(r.host) > EGRESS_HOST_MAX)
		fail("parsed request has a bad port or host length", r.host);
	if (!r.bracketed && !contains(data, end, r.host))
		fail("parsed host is not in the head", r.host);
	/* The proxy's decision (egress/proxy.c head_complete). */
	int allowed = (r.port == 80 || r.port == 443) && !r.bracketed &&
		      egress_host_allowed(r.host, allow, NALLOW);
	if (allowed && !reference_allows(r.host))
		fail("the proxy admits a host the reference matcher rejects", r.host);
	if (allowed && egress_host_is_ip(r.host))
		fail("the proxy admits an IP literal", r.host);
	if (!r.is_connect && !r.bracketed)
		check_forward(buf, end, &r);
	return 0;
}
