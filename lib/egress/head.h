/* The request head a box sends to the egress proxy (isolation.md §9.2):
 * finding its end under the smuggling rules, and reading the target host
 * and port from a CONNECT authority, an absolute-form URI or Host:. */
#ifndef KERN_EGRESS_HEAD_H
#define KERN_EGRESS_HEAD_H

#include <stddef.h>

#include "egress/match.h"

#define EGRESS_HEAD_MAX 16384	/* bytes, the final CRLFCRLF included */
/* A head of EGRESS_HEAD_MAX bytes as egress_head_forward writes it: the
 * Host line it makes (at most 270 bytes), "Connection: close" and a "/"
 * fit in the 512 more (the egress_head fuzz target holds it to that). */
#define EGRESS_FORWARD_MAX (EGRESS_HEAD_MAX + 512)

enum egress_scan {
	EGRESS_HEAD_MORE,	/* no end yet, nothing wrong so far */
	EGRESS_HEAD_DONE,	/* *end = length of the head, CRLFCRLF included */
	EGRESS_HEAD_BAD,	/* a LF without CR, a CR without LF or a NUL: 400 */
};

/* Scans buf[from..len) given that buf[0..from) was scanned before and
 * held no end, so feeding a head in pieces costs linear time. Bytes past
 * the end are not looked at: they belong to the tunnel. */
enum egress_scan egress_head_scan(const char *buf, size_t from, size_t len, size_t *end);

struct egress_request {
	int is_connect;
	char host[EGRESS_HOST_MAX + 1];	/* lower-case, no brackets, no userinfo */
	unsigned port;
	int bracketed;		/* host was a [v6] literal */
	/* A plain request: where its origin-form target lies in the head
	 * (path and query; an absolute URI without a path gets "/" in front),
	 * and how its body is framed. */
	size_t target_off, target_len;
	int target_slash;	/* put a "/" before the target */
	unsigned long long length;	/* Content-Length, 0 when absent */
	int chunked;		/* a Transfer-Encoding field is present */
};

/* Parses a complete head (as found by egress_head_scan). Returns 0, or
 * 400 for a malformed request line, header line or authority, a
 * missing/duplicated host, or (plain requests) a Content-Length that is
 * not one plain number, given twice or next to Transfer-Encoding. Says
 * nothing about whether the host is allowed. */
int egress_head_parse(const char *head, size_t len, struct egress_request *r);

/* The head a plain request is forwarded with (RFC 9112 §3.2, §3.2.2):
 * the request line in origin form, a Host field made from the checked
 * host and port (whatever Host the client sent), the client's other
 * fields except the hop-by-hop ones (Connection, Proxy-Connection,
 * Keep-Alive, TE, Upgrade, Proxy-Authorization), and Connection: close:
 * one request per connection. head and r as egress_head_parse left them.
 * Returns the length written to out, or 0 when it needs more than cap. */
size_t egress_head_forward(const char *head, size_t len, const struct egress_request *r, char *out,
			   size_t cap);

/* Host and port from an authority `[userinfo@]host[:port]`: userinfo ends
 * at the LAST '@', a [v6] literal loses its brackets, the host is
 * lower-cased, the port defaults to default_port. Returns 0 or 400. */
int egress_authority(const char *a, size_t len, unsigned default_port, struct egress_request *r);

#endif
