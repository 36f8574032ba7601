/* The request head a box sends to the egress proxy (isolation.md §9.2):
 * finding its end under the smuggling rules, and reading the target host
 * and port from a CONNECT authority, an absolute-form URI or Host:. */
#ifndef KERN_EGRESS_HEAD_H
#define KERN_EGRESS_HEAD_H

#include <stddef.h>

#include "egress_match.h"

#define EGRESS_HEAD_MAX 16384	/* bytes, the final CRLFCRLF included */

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
};

/* Parses a complete head (as found by egress_head_scan). Returns 0, or
 * 400 for a malformed request line, header line or authority, or a
 * missing/duplicated host. Says nothing about whether the host is
 * allowed. */
int egress_head_parse(const char *head, size_t len, struct egress_request *r);

/* Host and port from an authority `[userinfo@]host[:port]`: userinfo ends
 * at the LAST '@', a [v6] literal loses its brackets, the host is
 * lower-cased, the port defaults to default_port. Returns 0 or 400. */
int egress_authority(const char *a, size_t len, unsigned default_port, struct egress_request *r);

#endif
