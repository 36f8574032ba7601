#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/version.h"
#include "oci/http.h"
#include "oci/ref.h"

#define CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define ERRBODY_MAX 65536	/* bytes kept of a non-2xx body, for diagnosis */

void http_global_init(void)
{
	static int done;
	if (!done) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		done = 1;
	}
}

static int buf_append(struct http *h, const char *p, size_t n)
{
	if (h->buf_off > 0 && h->buf_off == h->buf_len)
		h->buf_off = h->buf_len = 0;
	if (h->buf_len + n > h->buf_cap) {
		size_t cap = h->buf_cap ? h->buf_cap : 65536;
		while (cap < h->buf_len + n)
			cap *= 2;
		char *nb = realloc(h->buf, cap);
		if (!nb)
			return -1;
		h->buf = nb;
		h->buf_cap = cap;
	}
	memcpy(h->buf + h->buf_len, p, n);
	h->buf_len += n;
	return 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct http *h = ctx;
	size_t len = size * n;
	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* A new response (after 1xx): forget the previous one's headers. */
		const char *sp = memchr(p, ' ', len);
		h->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		h->headers_done = 0;
		free(h->www_authenticate);
		h->www_authenticate = NULL;
		h->content_type[0] = 0;
		return len;
	}
	if (len <= 2 && (p[0] == '\r' || p[0] == '\n')) {
		if (h->status >= 200)
			h->headers_done = 1;
		return len;
	}
	const char *colon = memchr(p, ':', len);
	if (!colon)
		return len;
	size_t klen = (size_t)(colon - p);
	const char *v = colon + 1, *end = p + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	size_t vlen = (size_t)(end - v);
	if (klen == 16 && strncasecmp(p, "www-authenticate", 16) == 0 && !h->www_authenticate &&
	    vlen < 8192) {
		h->www_authenticate = strndup(v, vlen);
	} else if (klen == 12 && strncasecmp(p, "content-type", 12) == 0 &&
		   vlen < sizeof h->content_type) {
		memcpy(h->content_type, v, vlen);
		h->content_type[vlen] = 0;
	}
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct http *h = ctx;
	size_t len = size * n;
	uint64_t limit = (h->status >= 200 && h->status < 300) ? h->o->max_bytes : ERRBODY_MAX;
	if (h->got + len > limit) {
		if (h->status >= 200 && h->status < 300) {
			snprintf(h->err, sizeof h->err, "%.300s: response larger than %llu bytes", h->url,
				 (unsigned long long)limit);
			h->failed = 1;
			return 0;
		}
		len = limit > h->got ? (size_t)(limit - h->got) : 0;
	}
	if (buf_append(h, p, len) < 0) {
		snprintf(h->err, sizeof h->err, "%.300s: out of memory", h->url);
		h->failed = 1;
		return 0;
	}
	h->got += len;
	return size * n;
}

static long timeout_s(const struct http_opts *o)
{
#ifdef KERN_TEST_BUILD
	/* Tests shorten the limits rather than wait 60 s for a slow drip. */
	const char *t = env_get("KERN_TEST_HTTP_TIMEOUT");
	if (t && atol(t) > 0)
		return atol(t);
#endif
	return o->timeout_s;
}

static int start_hop(struct http *h)
{
	CURL *e = curl_easy_init();
	long left = (long)(h->deadline_ms - now_ms());
	char host[256];
	int https;
	if (!e || left <= 0) {
		if (e)
			curl_easy_cleanup(e);
		snprintf(h->err, sizeof h->err, "%.300s: %s", h->url, e ? "timed out" : "out of memory");
		return -1;
	}
	h->easy = e;
	h->status = 0;
	h->headers_done = h->done = 0;
	h->got = 0;
	h->buf_len = h->buf_off = 0;
	curl_easy_setopt(e, CURLOPT_URL, h->url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, left);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_CAINFO, CA_BUNDLE);
	/* Proxies from the environment would see credentials and blobs. */
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_USERAGENT, "kern/" KERN_VERSION);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL);
#ifdef KERN_TEST_BUILD
	{
		static struct curl_slist *resolve;
		const char *ca = env_get("KERN_TEST_CA_BUNDLE"), *res = env_get("KERN_TEST_RESOLVE");
		if (ca)
			curl_easy_setopt(e, CURLOPT_CAINFO, ca);
		if (res && !resolve)
			resolve = curl_slist_append(NULL, res);
		if (resolve)
			curl_easy_setopt(e, CURLOPT_RESOLVE, resolve);
	}
#endif
	struct curl_slist *hd = NULL;
	if (h->o->accept) {
		char line[1024];
		snprintf(line, sizeof line, "Accept: %s", h->o->accept);
		hd = curl_slist_append(hd, line);
	}
	if (h->o->authorization && url_host(h->url, host, sizeof host, &https) == 0 &&
	    strcmp(host, h->origin_host) == 0 && https >= h->origin_https) {
		size_t n = strlen(h->o->authorization) + 32;
		char *line = malloc(n);
		if (line) {
			snprintf(line, n, "Authorization: %s", h->o->authorization);
			hd = curl_slist_append(hd, line);
			explicit_bzero(line, n);
			free(line);
		}
	}
	h->hdrs = hd;
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hd);
	curl_multi_add_handle(h->multi, e);
	return 0;
}

static void end_hop(struct http *h)
{
	if (h->easy) {
		curl_multi_remove_handle(h->multi, h->easy);
		curl_easy_cleanup(h->easy);
		h->easy = NULL;
	}
	if (h->hdrs) {
		/* The list held the Authorization line: wipe before freeing. */
		for (struct curl_slist *s = h->hdrs; s; s = s->next)
			explicit_bzero(s->data, strlen(s->data));
		curl_slist_free_all(h->hdrs);
		h->hdrs = NULL;
	}
}

static void describe_curl_error(struct http *h, int rc)
{
	if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(h->err, sizeof h->err, "%.300s: timed out (limit %ld s)", h->url,
			 timeout_s(h->o));
	else
		snprintf(h->err, sizeof h->err, "%.300s: %s", h->url, curl_easy_strerror((CURLcode)rc));
}

/* Drive the transfer once: returns -1 on failure, 0 otherwise. */
static int pump(struct http *h)
{
	int running = 0;
	if (h->done)
		return 0;
	curl_multi_perform(h->multi, &running);
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(h->multi, &left)))
		if (m->msg == CURLMSG_DONE) {
			h->done = 1;
			h->result = m->data.result;
		}
	if (h->done) {
		if (h->failed)
			return -1;
		if (h->result != CURLE_OK) {
			describe_curl_error(h, h->result);
			return -1;
		}
		h->headers_done = 1;
		return 0;
	}
	if (h->failed)
		return -1;
	if (now_ms() > h->deadline_ms + 1000) {
		snprintf(h->err, sizeof h->err, "%.300s: timed out (limit %ld s)", h->url, timeout_s(h->o));
		return -1;
	}
	curl_multi_poll(h->multi, NULL, 0, 200, NULL);
	return 0;
}

static int redirect_allowed(struct http *h, const char *to)
{
	char host_from[256], host_to[256];
	int https_from, https_to;
	if (url_host(h->url, host_from, sizeof host_from, &https_from) < 0 ||
	    url_host(to, host_to, sizeof host_to, &https_to) < 0) {
		snprintf(h->err, sizeof h->err, "%.300s: redirect to a non-http(s) location refused", h->url);
		return 0;
	}
	if (https_to)
		return 1;
	if (!https_from && host_is_loopback(host_from) && host_is_loopback(host_to))
		return 1;
	snprintf(h->err, sizeof h->err, "%.300s: redirect to plain http (%.100s) refused", h->url, host_to);
	return 0;
}

int http_open(struct http *h, const char *url, const struct http_opts *o)
{
	http_global_init();
	memset(h, 0, sizeof *h);
	h->o = o;
	h->multi = curl_multi_init();
	h->deadline_ms = now_ms() + timeout_s(o) * 1000;
	if (strlen(url) >= sizeof h->url || !h->multi) {
		snprintf(h->err, sizeof h->err, "URL too long");
		return -1;
	}
	strcpy(h->url, url);
	if (url_host(url, h->origin_host, sizeof h->origin_host, &h->origin_https) < 0) {
		snprintf(h->err, sizeof h->err, "%.300s: not an http(s) URL", url);
		return -1;
	}
	for (int hops = 0;; hops++) {
		if (start_hop(h) < 0)
			return -1;
		while (!h->headers_done)
			if (pump(h) < 0)
				return -1;
		if (h->status < 300 || h->status >= 400 || h->status == 304)
			return 0;
		/* A redirect: finish reading its (small) body, then check it. */
		while (!h->done)
			if (pump(h) < 0)
				return -1;
		char *loc = NULL, next[4096];
		curl_easy_getinfo(h->easy, CURLINFO_REDIRECT_URL, &loc);
		if (!loc) {
			snprintf(h->err, sizeof h->err, "%.300s: HTTP %ld without a Location", h->url, h->status);
			return -1;
		}
		if (hops >= o->max_redirects) {
			snprintf(h->err, sizeof h->err, "%.300s: more than %d redirects", url, o->max_redirects);
			return -1;
		}
		if (!redirect_allowed(h, loc))
			return -1;
		if (strlen(loc) >= sizeof next) {
			snprintf(h->err, sizeof h->err, "%.300s: redirect location too long", h->url);
			return -1;
		}
		strcpy(next, loc);
		end_hop(h);
		strcpy(h->url, next);
	}
}

ssize_t http_read(struct http *h, void *buf, size_t len)
{
	while (h->buf_off == h->buf_len) {
		if (h->done)
			return 0;
		if (pump(h) < 0)
			return -1;
	}
	return (ssize_t)buf_take(buf, len, h->buf, &h->buf_off, h->buf_len);
}

int http_slurp(struct http *h, char **body, size_t *len)
{
	while (!h->done)
		if (pump(h) < 0)
			return -1;
	size_t n = h->buf_len - h->buf_off;
	char *b = malloc(n + 1);
	if (!b) {
		snprintf(h->err, sizeof h->err, "out of memory");
		return -1;
	}
	memcpy(b, h->buf + h->buf_off, n);
	b[n] = 0;
	h->buf_off = h->buf_len;
	*body = b;
	*len = n;
	return 0;
}

void http_close(struct http *h)
{
	end_hop(h);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	h->multi = NULL;
	free(h->buf);
	h->buf = NULL;
	free(h->www_authenticate);
	h->www_authenticate = NULL;
}
