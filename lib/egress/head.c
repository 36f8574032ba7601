/* Request-head scanning and parsing for the egress proxy. Everything here
 * reads bytes a box wrote: every length is checked before it is used and
 * anything unusual is a 400, never a guess. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "egress/head.h"

enum egress_scan egress_head_scan(const char *buf, size_t from, size_t len, size_t *end)
{
	for (size_t i = from; i < len; i++) {
		char c = buf[i];
		if (c == 0)
			return EGRESS_HEAD_BAD;
		/* A CR must be followed by LF: the byte after it decides. */
		if (i > 0 && buf[i - 1] == '\r' && c != '\n')
			return EGRESS_HEAD_BAD;
		if (c != '\n')
			continue;
		if (i == 0 || buf[i - 1] != '\r')
			return EGRESS_HEAD_BAD;
		if (i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
			*end = i + 1;
			return EGRESS_HEAD_DONE;
		}
	}
	return EGRESS_HEAD_MORE;
}

/* RFC 9110 token characters (methods and field names). */
static int is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 1;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

int egress_authority(const char *a, size_t len, unsigned default_port, struct egress_request *r)
{
	const char *rest;
	size_t hlen;
	const char *at = NULL;
	for (size_t i = 0; i < len; i++)
		if (a[i] == '@')
			at = a + i;
	if (at) {
		len -= (size_t)(at + 1 - a);
		a = at + 1;
	}
	r->bracketed = 0;
	if (len > 0 && a[0] == '[') {
		const char *close = memchr(a, ']', len);
		struct in6_addr a6;
		if (!close)
			return 400;
		hlen = (size_t)(close - a - 1);
		if (hlen == 0 || hlen > EGRESS_HOST_MAX)
			return 400;
		memcpy(r->host, a + 1, hlen);
		r->host[hlen] = 0;
		/* Brackets hold an IPv6 literal and nothing else. */
		if (inet_pton(AF_INET6, r->host, &a6) != 1)
			return 400;
		r->bracketed = 1;
		rest = close + 1;
	} else {
		const char *colon = memchr(a, ':', len);
		hlen = colon ? (size_t)(colon - a) : len;
		if (hlen == 0 || hlen > EGRESS_HOST_MAX)
			return 400;
		for (size_t i = 0; i < hlen; i++)
			if (!is_host_char((unsigned char)a[i]))
				return 400;
		memcpy(r->host, a, hlen);
		r->host[hlen] = 0;
		rest = a + hlen;
	}
	for (char *p = r->host; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');

	size_t rlen = len - (size_t)(rest - a);
	if (rlen == 0) {
		r->port = default_port;
		return 0;
	}
	if (rest[0] != ':' || rlen < 2 || rlen > 6)
		return 400;
	unsigned port = 0;
	for (size_t i = 1; i < rlen; i++) {
		if (rest[i] < '0' || rest[i] > '9')
			return 400;
		port = port * 10 + (unsigned)(rest[i] - '0');
	}
	if (port == 0 || port > 65535)
		return 400;
	r->port = port;
	return 0;
}

/* Splits "METHOD SP TARGET SP HTTP/1.x" (no CRLF). */
static int request_line(const char *p, size_t len, const char **target, size_t *tlen, int *is_connect)
{
	size_t i = 0, m, t0;
	while (i < len && is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i >= len || p[i] != ' ')
		return 400;
	m = i++;
	t0 = i;
	while (i < len && (unsigned char)p[i] > 0x20 && (unsigned char)p[i] < 0x7f)
		i++;
	if (i == t0 || i >= len || p[i] != ' ')
		return 400;
	*target = p + t0;
	*tlen = i - t0;
	i++;
	if (len - i != 8 || memcmp(p + i, "HTTP/1.", 7) != 0 || (p[i + 7] != '0' && p[i + 7] != '1'))
		return 400;
	*is_connect = m == 7 && memcmp(p, "CONNECT", 7) == 0;
	return 0;
}

/* One header line (no CRLF): "name:" OWS value OWS. Gives the name's
 * length and the value without its surrounding whitespace. */
static int header_line(const char *p, size_t len, size_t *nlen, const char **val, size_t *vlen)
{
	size_t i = 0;
	while (i < len && is_tchar((unsigned char)p[i]))
		i++;
	/* No name, space before the colon, or an obs-fold continuation. */
	if (i == 0 || i >= len || p[i] != ':')
		return 400;
	size_t v = i + 1, e = len;
	for (size_t j = v; j < len; j++) {
		unsigned char c = (unsigned char)p[j];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 400;
	}
	while (v < e && (p[v] == ' ' || p[v] == '\t'))
		v++;
	while (e > v && (p[e - 1] == ' ' || p[e - 1] == '\t'))
		e--;
	*nlen = i;
	*val = p + v;
	*vlen = e - v;
	return 0;
}

static int named(const char *p, size_t nlen, const char *name)
{
	return nlen == strlen(name) && strncasecmp(p, name, nlen) == 0;
}

/* What the fields say about the request: its Host (counted), its body's
 * framing. */
struct fields {
	const char *host;
	size_t hostlen;
	int nhost, nlength, bad_length;
};

static void field(const char *p, size_t nlen, const char *v, size_t vlen, struct fields *f,
		  struct egress_request *r)
{
	if (named(p, nlen, "host")) {
		f->nhost++;
		f->host = v;
		f->hostlen = vlen;
	} else if (named(p, nlen, "content-length")) {
		/* One plain number: no list, no sign, no second field. */
		unsigned long long n = 0;
		f->nlength++;
		f->bad_length |= vlen == 0 || vlen > 18;
		for (size_t i = 0; i < vlen && !f->bad_length; i++) {
			if (v[i] < '0' || v[i] > '9')
				f->bad_length = 1;
			else
				n = n * 10 + (unsigned)(v[i] - '0');
		}
		r->length = n;
	} else if (named(p, nlen, "transfer-encoding")) {
		r->chunked = 1;
	}
}

int egress_head_parse(const char *head, size_t len, struct egress_request *r)
{
	const char *target = NULL;
	size_t tlen = 0, pos = 0;
	struct fields f = {0};
	int first = 1;

	memset(r, 0, sizeof *r);
	if (len < 4 || memcmp(head + len - 4, "\r\n\r\n", 4) != 0)
		return 400;
	while (pos < len) {
		const char *eol = memchr(head + pos, '\r', len - pos);
		if (!eol || (size_t)(eol - head) + 1 >= len || eol[1] != '\n')
			return 400;
		size_t n = (size_t)(eol - (head + pos));
		if (n == 0)
			break;	/* the empty line that ends the head */
		if (first) {
			int rc = request_line(head + pos, n, &target, &tlen, &r->is_connect);
			if (rc)
				return rc;
		} else {
			size_t nlen, vlen;
			const char *v;
			int rc = header_line(head + pos, n, &nlen, &v, &vlen);
			if (rc)
				return rc;
			field(head + pos, nlen, v, vlen, &f, r);
		}
		first = 0;
		pos += n + 2;
	}
	if (first || pos + 2 != len)
		return 400;
	/* Two Host: fields mean two readers may disagree: refuse. */
	if (f.nhost > 1)
		return 400;
	if (r->is_connect)
		return egress_authority(target, tlen, 443, r);
	/* The same for the body's end: it is where the next request would
	 * start (RFC 9112 §6.3). */
	if (f.bad_length || f.nlength > 1 || (f.nlength && r->chunked))
		return 400;

	static const char *const schemes[] = {"http://", "https://"};
	for (size_t s = 0; s < 2; s++) {
		size_t sl = strlen(schemes[s]);
		if (tlen >= sl && strncasecmp(target, schemes[s], sl) == 0) {
			const char *a = target + sl;
			size_t alen = 0;
			while (alen < tlen - sl && a[alen] != '/' && a[alen] != '?' && a[alen] != '#')
				alen++;
			/* Origin form: what follows the authority, "/" first. */
			r->target_off = (size_t)(a + alen - head);
			r->target_len = tlen - sl - alen;
			r->target_slash = r->target_len == 0 || a[alen] != '/';
			return egress_authority(a, alen, 80, r);
		}
	}
	if (target[0] != '/' && !(tlen == 1 && target[0] == '*'))
		return 400;
	if (f.nhost == 0 || f.hostlen == 0 || memchr(f.host, '@', f.hostlen))
		return 400;
	r->target_off = (size_t)(target - head);
	r->target_len = tlen;
	return egress_authority(f.host, f.hostlen, 80, r);
}

/* Fields that concern one connection only (RFC 9110 §7.6.1), and the
 * client's credentials for a proxy: never passed on. */
static int hop_by_hop(const char *p, size_t nlen)
{
	static const char *const names[] = {"host", "connection", "proxy-connection", "keep-alive",
					    "te", "upgrade", "proxy-authorization"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (named(p, nlen, names[i]))
			return 1;
	return 0;
}

struct out {
	char *p;
	size_t cap, len;
	int full;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->full || n > o->cap - o->len) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

size_t egress_head_forward(const char *head, size_t len, const struct egress_request *r, char *out,
			   size_t cap)
{
	struct out o = {out, cap, 0, 0};
	/* The request line: METHOD SP target SP HTTP/1.x, as parsed. */
	const char *eol = memmem(head, len, "\r\n", 2), *sp = memchr(head, ' ', len);
	char port[8];
	if (!eol || !sp || eol - head < 8)
		return 0;
	put(&o, head, (size_t)(sp - head) + 1);
	if (r->target_slash)
		puts_(&o, "/");
	put(&o, head + r->target_off, r->target_len);
	puts_(&o, " ");
	put(&o, eol - 8, 8);
	puts_(&o, r->bracketed ? "\r\nHost: [" : "\r\nHost: ");
	puts_(&o, r->host);
	if (r->bracketed)
		puts_(&o, "]");
	if (r->port != 80) {
		snprintf(port, sizeof port, ":%u", r->port);
		puts_(&o, port);
	}
	puts_(&o, "\r\n");
	for (const char *p = eol + 2; p < head + len;) {
		const char *e = memmem(p, (size_t)(head + len - p), "\r\n", 2);
		if (!e || e == p)
			break;
		const char *colon = memchr(p, ':', (size_t)(e - p));
		size_t nlen = colon ? (size_t)(colon - p) : (size_t)(e - p);
		if (!hop_by_hop(p, nlen))
			put(&o, p, (size_t)(e - p) + 2);
		p = e + 2;
	}
	puts_(&o, "Connection: close\r\n\r\n");
	return o.full ? 0 : o.len;
}
