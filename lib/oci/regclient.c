#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/json.h"
#include "oci/creds.h"
#include "oci/manifest.h"
#include "oci/ref.h"
#include "oci/regclient.h"
#include "oci/wwwauth.h"

#define PROBE_MAX 1000000
#define TOKEN_MAX 8000000

static const struct http_opts probe_opts = {30, PROBE_MAX, 5, NULL, NULL};

static void url_encode(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *s && o + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = 0;
}

/* The realm may have the credentials only if it is https on the
 * registry's own host, or Docker Hub's auth host for Docker Hub. */
static int realm_may_have_creds(const struct regclient *g, const char *realm)
{
	char rh[256], gh[256];
	int https;
	if (url_host(realm, rh, sizeof rh, &https) < 0 || !https)
		return 0;
	char tmp[300];
	snprintf(tmp, sizeof tmp, "https://%s", g->host);
	if (url_host(tmp, gh, sizeof gh, &https) < 0)
		return 0;
	return strcmp(rh, gh) == 0 || (g->hub && strcmp(rh, "auth.docker.io") == 0);
}

static int token_ok(const char *t)
{
	if (!*t)
		return 0;
	for (; *t; t++)
		if ((unsigned char)*t <= 0x20 || (unsigned char)*t >= 0x7f)
			return 0;
	return 1;
}

static int fetch_token(struct regclient *g, const struct www_auth *a, const char *basic)
{
	char svc[600], repo[800], url[4096], auth[4200];
	struct http h;
	struct http_opts o = {60, TOKEN_MAX, 5, "application/json", NULL};
	char *body = NULL;
	size_t len;
	int rh_https;
	char rh[256];

	if (url_host(a->realm, rh, sizeof rh, &rh_https) < 0) {
		snprintf(g->err, sizeof g->err, "%s: the token realm '%.200s' is not an http(s) URL",
			 g->ref, a->realm);
		return -1;
	}
	if (!rh_https && !host_is_loopback(rh)) {
		snprintf(g->err, sizeof g->err, "%s: refusing the plain-http token realm %.200s", g->ref,
			 a->realm);
		return -1;
	}
	url_encode(a->service, svc, sizeof svc);
	url_encode(g->repo, repo, sizeof repo);
	snprintf(url, sizeof url, "%s%s%s%s%sscope=repository:%s:pull", a->realm,
		 strchr(a->realm, '?') ? "&" : "?", svc[0] ? "service=" : "", svc,
		 svc[0] ? "&" : "", repo);
	if (basic) {
		snprintf(auth, sizeof auth, "Basic %s", basic);
		o.authorization = auth;
	}
	int rc = http_open(&h, url, &o);
	explicit_bzero(auth, sizeof auth);
	if (rc < 0 || http_slurp(&h, &body, &len) < 0) {
		snprintf(g->err, sizeof g->err, "%s: token request failed: %s", g->ref, h.err);
		http_close(&h);
		return -1;
	}
	long status = h.status;
	http_close(&h);
	if (status != 200) {
		snprintf(g->err, sizeof g->err,
			 "%s: authentication failed: the token service answered HTTP %ld", g->ref, status);
		free(body);
		return -1;
	}
	struct json j;
	const char *why;
	if (json_parse(&j, body, len, TOKEN_MAX, JSON_DEPTH, &why) < 0) {
		snprintf(g->err, sizeof g->err, "%s: authentication failed: token response: %s", g->ref, why);
		free(body);
		return -1;
	}
	int t = json_get(&j, 0, "token");
	if (t < 0)
		t = json_get(&j, 0, "access_token");
	char *tok = json_strdup(&j, t, 16384);
	json_free(&j);
	explicit_bzero(body, len);
	free(body);
	if (!tok || !token_ok(tok)) {
		snprintf(g->err, sizeof g->err,
			 "%s: authentication failed: the token response has no usable token", g->ref);
		free(tok);
		return -1;
	}
	size_t n = strlen(tok) + 8;
	g->authorization = malloc(n);
	if (g->authorization)
		snprintf(g->authorization, n, "Bearer %s", tok);
	explicit_bzero(tok, strlen(tok));
	free(tok);
	return g->authorization ? 0 : -1;
}

int regclient_connect(struct regclient *g, const char *base, const char *host, const char *repo,
		     const char *ref, int hub)
{
	char url[1024], cred_host[256], basic[4096];
	struct http h;
	struct www_auth a;

	int quiet = g->quiet_errors;
	memset(g, 0, sizeof *g);
	g->quiet_errors = quiet;
	snprintf(g->base, sizeof g->base, "%s", base);
	snprintf(g->host, sizeof g->host, "%s", host);
	snprintf(g->repo, sizeof g->repo, "%s", repo);
	g->ref = ref;
	g->hub = hub;
	snprintf(url, sizeof url, "%s/v2/", base);
	if (http_open(&h, url, &probe_opts) < 0) {
		snprintf(g->err, sizeof g->err, "%s: cannot reach the registry: %s", ref, h.err);
		http_close(&h);
		return -1;
	}
	long status = h.status;
	int parsed = status == 401 && h.www_authenticate && www_auth_parse(h.www_authenticate, &a) == 0;
	http_close(&h);
	if (status != 401 || !parsed || a.scheme == AUTH_OTHER || a.scheme == AUTH_NONE)
		return 0;	/* anonymous */

	creds_host(host, cred_host, sizeof cred_host);
	int have = creds_lookup(cred_host, basic, sizeof basic) == 1;
	int rc;
	if (a.scheme == AUTH_BASIC) {
		if (!have) {
			snprintf(g->err, sizeof g->err,
				 "%s: the registry requires authentication (Basic) and no credentials are stored for %s (run `kern login %s`)",
				 ref, cred_host, cred_host);
			return -1;
		}
		size_t n = strlen(basic) + 8;
		g->authorization = malloc(n);
		if (g->authorization)
			snprintf(g->authorization, n, "Basic %s", basic);
		explicit_bzero(basic, sizeof basic);
		return g->authorization ? 0 : -1;
	}
	if (!a.realm[0]) {
		snprintf(g->err, sizeof g->err, "%s: authentication failed: a Bearer challenge without a realm",
			 ref);
		return -1;
	}
	if (have && !realm_may_have_creds(g, a.realm)) {
		warning("withholding credentials - %s pointed its auth to a different host (%s); fetching an anonymous token instead",
			host, a.realm);
		have = 0;
	}
	rc = fetch_token(g, &a, have ? basic : NULL);
	explicit_bzero(basic, sizeof basic);
	return rc;
}

int regclient_manifest(struct regclient *g, const char *reference, char **body, size_t *len,
		      char *content_type, size_t ctlen, long *status)
{
	char url[1024];
	struct http h;
	struct http_opts o = {60, MANIFEST_MAX, 5, MANIFEST_ACCEPT, g->authorization};
	snprintf(url, sizeof url, "%s/v2/%s/manifests/%s", g->base, g->repo, reference);
	if (http_open(&h, url, &o) < 0 || http_slurp(&h, body, len) < 0) {
		snprintf(g->err, sizeof g->err, "%s: manifest request failed: %s", g->ref, h.err);
		http_close(&h);
		return -1;
	}
	*status = h.status;
	snprintf(content_type, ctlen, "%s", h.content_type);
	http_close(&h);
	return *status == 200 ? 0 : 1;
}

int regclient_blob(struct regclient *g, const char *digest, unsigned long long max, long timeout_s,
		  struct http *h)
{
	char url[1024];
	/* The options must outlive the request: keep them in the registry. */
	static struct http_opts o;
	o = (struct http_opts){timeout_s, max, 10, NULL, g->authorization};
	snprintf(url, sizeof url, "%s/v2/%s/blobs/%s", g->base, g->repo, digest);
	if (http_open(h, url, &o) < 0) {
		snprintf(g->err, sizeof g->err, "%s: blob %s: %s", g->ref, digest, h->err);
		http_close(h);
		return -1;
	}
	if (h->status != 200) {
		snprintf(g->err, sizeof g->err, "%s: blob %s: HTTP %ld", g->ref, digest, h->status);
		http_close(h);
		return -1;
	}
	return 0;
}

void regclient_close(struct regclient *g)
{
	if (g->authorization) {
		explicit_bzero(g->authorization, strlen(g->authorization));
		free(g->authorization);
		g->authorization = NULL;
	}
}
