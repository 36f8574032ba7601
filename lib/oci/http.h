/* The HTTP client of kern-pull, on libcurl's multi interface so a layer
 * can be pulled through it as the extractor asks for bytes. Redirects are
 * followed here, not by curl, so every hop is checked: https always, plain
 * http only from a loopback http URL to a loopback host, Authorization only
 * to the host it was meant for; limits of isolation.md §11.1 per request. */
#ifndef KERN_HTTP_H
#define KERN_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct http_opts {
	long timeout_s;			/* whole request, all hops */
	uint64_t max_bytes;		/* body of the final response */
	int max_redirects;
	const char *accept;		/* Accept header value, or NULL */
	const char *authorization;	/* "Bearer ..." / "Basic ...", or NULL; never logged */
};

struct http {
	void *multi, *easy, *hdrs;
	const struct http_opts *o;
	char url[4096];			/* current hop; never holds credentials */
	char origin_host[256];		/* host the Authorization was meant for */
	int origin_https;
	long status;
	int headers_done, done, failed;
	int result;			/* CURLcode of the finished transfer */
	char *buf;			/* body bytes not yet read */
	size_t buf_len, buf_off, buf_cap;
	uint64_t got;
	long long deadline_ms;
	char *www_authenticate;		/* of the final response */
	char content_type[256];
	char err[512];			/* why the request failed */
};

/* One-time libcurl setup; safe to call again. */
void http_global_init(void);

/* Start GET url and follow redirects until a final response's headers are
 * in: returns 0 with h->status set, or -1 with h->err. */
int http_open(struct http *h, const char *url, const struct http_opts *o);
/* Body bytes of the final response: >0, 0 at the end, -1 with h->err
 * (timeout, over max_bytes, transport error). */
ssize_t http_read(struct http *h, void *buf, size_t len);
/* Read the whole body (at most max_bytes) into a malloc'd, NUL-terminated
 * buffer. Returns 0 or -1 with h->err. */
int http_slurp(struct http *h, char **body, size_t *len);
void http_close(struct http *h);

#endif
