#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/env.h"
#include "base/testhook.h"
#include "image/sidecar.h"
#include "layer/unpack.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/mirrors.h"
#include "oci/progress.h"
#include "oci/pull.h"
#include "oci/regclient.h"

#define LAYER_MAX 8000000000ULL
#define BLOB_TIMEOUT 600

/* Stop pretending to draw: the progress line goes before any other line. */
#define FAIL(area, ...)                        \
	do {                                   \
		progress_end();                \
		fatal(area, __VA_ARGS__);      \
	} while (0)

/* The layer_reader handed to unpack_stage: pulls the blob, hashes the
 * compressed bytes and enforces the size, so one pass does it all. */
struct layer_pump {
	struct blob_stream s;
	struct sha256 h;
	uint64_t got, max, declared;
	int index, failed;
	char why[700];
};

static ssize_t pump_read(void *ctx, void *buf, size_t len)
{
	struct layer_pump *p = ctx;
	if (p->failed)
		return -1;
	ssize_t n = p->s.read(p->s.ctx, buf, len);
	if (n < 0) {
		p->failed = 1;
		snprintf(p->why, sizeof p->why, "layer %d: %s", p->index + 1, p->s.error(p->s.ctx));
		return -1;
	}
	p->got += (uint64_t)n;
	if (p->got > p->max) {
		p->failed = 1;
		snprintf(p->why, sizeof p->why, "layer %d is larger than %s (%llu bytes)", p->index + 1,
			 p->declared ? "its descriptor says" : "the limit",
			 (unsigned long long)p->max);
		return -1;
	}
	sha256_feed(&p->h, buf, (size_t)n);
	progress_update(p->index, p->got, p->declared);
	if (p->got == (uint64_t)n)
		test_phase("pull-blob");
	return n;
}

/* Read a whole small blob (the config), verifying its digest. */
static char *read_blob(const struct blob_source *src, const char *ref, const char *digest,
		       uint64_t max, size_t *len)
{
	struct blob_stream s;
	char why[700] = "";
	if (src->open(src->src, digest, max, 60, &s, why, sizeof why) < 0) {
		FAIL(src->area, "%s", why);
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	struct sha256 h;
	sha256_begin(&h);
	for (;;) {
		if (!buf)
			break;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = s.read(s.ctx, buf + n, cap - n);
		if (r < 0) {
			snprintf(why, sizeof why, "%s: config blob %s: %s", ref, digest, s.error(s.ctx));
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		sha256_feed(&h, buf + n, (size_t)r);
		n += (size_t)r;
		if (n > max) {
			free(buf);
			buf = NULL;
			snprintf(why, sizeof why, "%s: config blob larger than %llu bytes", ref,
				 (unsigned long long)max);
			break;
		}
	}
	unsigned char sum[32], want[32];
	char got[DIGEST_LEN + 1];
	sha256_end(&h, sum);
	if (!buf) {
		if (!why[0])
			snprintf(why, sizeof why, "%s: config blob %s: out of memory", ref, digest);
		s.close(s.ctx);
		FAIL("pull", "%s", why);
		return NULL;
	}
	s.close(s.ctx);
	buf[n] = 0;
	digest_parse(digest, want);
	if (memcmp(sum, want, 32) != 0) {
		digest_format(sum, got);
		FAIL("pull", "blob digest mismatch (expected %s, got %s) - refusing", digest, got);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int fetch_layer(const struct blob_source *src, const char *ref, int i,
		       const struct descriptor *d, const char *diff_id, int rootfs_fd)
{
	struct layer_pump p;
	unsigned char diff[32], sum[32], want[32];
	char why[700] = "", got[DIGEST_LEN + 1];
	const char *hex = digest_hex(d->digest);

	memset(&p, 0, sizeof p);
	p.index = i;
	p.declared = d->size;
	p.max = d->size && d->size < LAYER_MAX ? d->size : LAYER_MAX;
	if (src->open(src->src, d->digest, p.max, BLOB_TIMEOUT, &p.s, p.why, sizeof p.why) < 0) {
		FAIL(src->area, "%s", p.why);
		return 1;
	}
	sha256_begin(&p.h);
	struct layer_reader r = {pump_read, &p};
	int staged = unpack_stage(&r, rootfs_fd, i, hex, &unpack_default_limits, diff, why,
				  sizeof why) == 0;
	/* The extractor stops at the tar end; the digest covers every byte.
	 * After a refusal the rest is still read (within the size limit) so a
	 * lying blob is reported as what it is, not as bad tar. */
	char tail[65536];
	while (!p.failed && pump_read(&p, tail, sizeof tail) > 0)
		;
	p.s.close(p.s.ctx);
	sha256_end(&p.h, sum);
	digest_parse(d->digest, want);
	if (!staged && !p.failed && memcmp(sum, want, 32) != 0) {
		digest_format(sum, got);
		FAIL("pull", "blob digest mismatch (expected %s, got %s) - refusing", d->digest, got);
		return 1;
	}
	if (!staged) {
		if (p.failed)
			FAIL("pull", "%s: %s", ref, p.why);
		else
			FAIL("pull", "%s: layer %d: %s", ref, i + 1, why);
		return 1;
	}
	if (p.failed) {
		unpack_abort(rootfs_fd, i, hex);
		FAIL("pull", "%s: %s", ref, p.why);
		return 1;
	}
	if (memcmp(sum, want, 32) != 0) {
		unpack_abort(rootfs_fd, i, hex);
		digest_format(sum, got);
		FAIL("pull", "blob digest mismatch (expected %s, got %s) - refusing", d->digest, got);
		return 1;
	}
	digest_parse(diff_id, want);
	if (memcmp(diff, want, 32) != 0) {
		unpack_abort(rootfs_fd, i, hex);
		digest_format(diff, got);
		FAIL("pull", "layer %d diff_id mismatch (expected %s, got %s) - refusing", i + 1, diff_id,
		     got);
		return 1;
	}
	test_phase("pull-merge");
	if (unpack_commit(rootfs_fd, i, hex, why, sizeof why) < 0) {
		FAIL("pull", "%s: layer %d: %s", ref, i + 1, why);
		return 1;
	}
	return 0;
}

int image_fetch(const struct blob_source *src, const char *ref, const char *manifest_digest,
		const char *manifest, size_t mlen, int rootfs_fd, char **sidecar, size_t *slen)
{
	struct manifest *m = malloc(sizeof *m);
	struct image_meta meta;
	char why[700];
	int rc = 1;
	size_t clen;
	char *config = NULL;

	if (!m) {
		fatal("pull", "out of memory");
		return 1;
	}
	int mr = manifest_parse(manifest, mlen, m, why, sizeof why);
	if (mr == 1) {
		fatal("manifest", "%s: no layers in manifest", ref);
		goto out;
	}
	if (mr < 0) {
		fatal("manifest", "%s: %s - refusing", ref, why);
		goto out;
	}
	progress_begin(m->nlayers);
	config = read_blob(src, ref, m->config.digest, CONFIG_MAX, &clen);
	if (!config)
		goto out;
	if (config_parse(config, clen, &meta, why, sizeof why) < 0) {
		FAIL("pull", "%s: %s - refusing", ref, why);
		goto out;
	}
	if (meta.ndiff != m->nlayers) {
		FAIL("pull", "%s: the config lists %d diff_ids for %d layers - refusing", ref, meta.ndiff,
		     m->nlayers);
		image_meta_free(&meta);
		goto out;
	}
	for (int i = 0; i < m->nlayers; i++)
		if (fetch_layer(src, ref, i, &m->layers[i], meta.diff_ids[i], rootfs_fd) != 0) {
			image_meta_free(&meta);
			goto out;
		}
	progress_end();
	*sidecar = sidecar_render(manifest_digest, &meta, slen);
	image_meta_free(&meta);
	if (!*sidecar) {
		fatal("pull", "out of memory");
		goto out;
	}
	rc = 0;
out:
	progress_end();
	free(config);
	free(m);
	return rc;
}

/* ---- registry source ---- */

struct registry_stream {
	struct http h;
	struct regclient *g;
};

static ssize_t reg_read(void *ctx, void *buf, size_t len)
{
	struct registry_stream *s = ctx;
	ssize_t n = http_read(&s->h, buf, len);
	if (n < 0)
		snprintf(s->g->err, sizeof s->g->err, "%s", s->h.err);
	return n;
}

static const char *reg_error(void *ctx)
{
	struct registry_stream *s = ctx;
	return s->h.err[0] ? s->h.err : "download failed";
}

static void reg_close(void *ctx)
{
	struct registry_stream *s = ctx;
	http_close(&s->h);
	free(s);
}

static int reg_open(void *src, const char *digest, uint64_t max, long timeout_s,
		    struct blob_stream *bs, char *why, size_t wlen)
{
	struct regclient *g = src;
	struct registry_stream *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	s->g = g;
	if (regclient_blob(g, digest, max, timeout_s, &s->h) < 0) {
		snprintf(why, wlen, "%s", g->err);
		free(s);
		return -1;
	}
	bs->read = reg_read;
	bs->close = reg_close;
	bs->error = reg_error;
	bs->ctx = s;
	return 0;
}

/* ---- manifest resolution ---- */

struct failure {
	char area[16];
	char msg[1024];
};

static int failf(struct failure *f, const char *area, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int failf(struct failure *f, const char *area, const char *fmt, ...)
{
	va_list ap;
	snprintf(f->area, sizeof f->area, "%s", area);
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof f->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* A registry answer without a usable manifest: say what the body says. */
static int diagnose(struct failure *f, const char *ref, const char *body, long status)
{
	if (status == 429 || strstr(body, "TOOMANYREQUESTS"))
		return failf(f, "registry", "%s: rate limited by the registry (TOOMANYREQUESTS); try again later, or `kern login` for a higher limit", ref);
	if (strstr(body, "MANIFEST_UNKNOWN") || strstr(body, "NAME_UNKNOWN") || status == 404)
		return failf(f, "registry", "%s: manifest unknown", ref);
	if (status == 401 || status == 403 || strstr(body, "UNAUTHORIZED") || strstr(body, "DENIED"))
		return failf(f, "registry", "%s: authentication required or denied by the registry", ref);
	if (status != 200)
		return failf(f, "registry", "%s: the registry answered HTTP %ld", ref, status);
	return failf(f, "manifest", "%s: no layers in manifest", ref);
}

static int get_manifest(struct regclient *g, const char *ref, const char *reference,
			const char *pinned, char **body, size_t *len, enum manifest_kind *kind,
			char digest[DIGEST_LEN + 1], struct failure *f)
{
	char ct[256], why[600];
	long status;
	unsigned char sum[32];
	int rc = regclient_manifest(g, reference, body, len, ct, sizeof ct, &status);
	if (rc < 0)
		return failf(f, "registry", "%s", g->err);
	if (rc == 1) {
		diagnose(f, ref, *body, status);
		free(*body);
		return -1;
	}
	sha256_sum(*body, *len, sum);
	digest_format(sum, digest);
	if (pinned && strcmp(pinned, digest) != 0) {
		failf(f, "manifest", "manifest digest mismatch (expected %s, got %s) - refusing", pinned,
		      digest);
		free(*body);
		return -1;
	}
	if (manifest_kind(*body, *len, ct, kind, why, sizeof why) < 0) {
		if (!strstr(why, "schema 1") &&
		    (strstr(*body, "TOOMANYREQUESTS") || strstr(*body, "MANIFEST_UNKNOWN") ||
		     strstr(*body, "NAME_UNKNOWN") || strstr(*body, "UNAUTHORIZED")))
			diagnose(f, ref, *body, 200);
		else
			failf(f, "manifest", "%s: %s - refusing", ref, why);
		free(*body);
		return -1;
	}
	return 0;
}

/* The image manifest for r on g: through the index when there is one. */
static int resolve(struct regclient *g, const char *ref, const struct image_ref *r, const char *arch,
		   char **body, size_t *len, char digest[DIGEST_LEN + 1], struct failure *f)
{
	enum manifest_kind kind = MK_MANIFEST;
	char why[600], offered[512], chosen[DIGEST_LEN + 1];
	if (get_manifest(g, ref, r->reference, r->is_digest ? r->reference : NULL, body, len, &kind,
			 digest, f) < 0)
		return -1;
	if (kind == MK_MANIFEST)
		return 0;
	int sel = index_select(*body, *len, arch, chosen, offered, sizeof offered, why, sizeof why);
	free(*body);
	*body = NULL;
	if (sel < 0)
		return failf(f, "manifest", "%s: index: %s - refusing", ref, why);
	if (sel == 1)
		return failf(f, "image", "%s: no linux/%s image in the index (it offers linux: %s)", ref,
			     arch, offered[0] ? offered : "none");
	if (get_manifest(g, ref, chosen, chosen, body, len, &kind, digest, f) < 0)
		return -1;
	if (kind != MK_MANIFEST) {
		free(*body);
		*body = NULL;
		return failf(f, "manifest", "%s: the index points at another index - refusing", ref);
	}
	return 0;
}

int image_pull(const char *ref, const struct image_ref *r, const char *arch, int rootfs_fd,
	       char **sidecar, size_t *slen)
{
	struct mirror ms[MIRRORS_MAX];
	struct failure f = {"", ""};
	char base[600];
	int n = mirrors_for(r->registry, ms, MIRRORS_MAX);
	int only = env_get("KERN_REGISTRY_MIRRORS_ONLY") != NULL;
	int hub = strcmp(r->registry, "registry-1.docker.io") == 0;
	if (n < 0)
		return 1;
	if (!arch)
		arch = host_arch();
	/* Mirrors first, then the registry itself unless mirrors only. */
	int total = only ? n : n + 1;
	if (total == 0) {
		fatal("registry", "%s: KERN_REGISTRY_MIRRORS_ONLY is set but no mirror is configured for %s",
		      ref, r->registry);
		return 1;
	}
	for (int k = 0; k < total; k++) {
		struct regclient g;
		char *body = NULL, digest[DIGEST_LEN + 1];
		size_t len;
		memset(&g, 0, sizeof g);
		if (k < n)
			snprintf(base, sizeof base, "%s", ms[k].base);
		else
			image_ref_base(r, base, sizeof base);
		const char *host = k < n ? ms[k].host : r->registry;
		if (regclient_connect(&g, base, host, r->repo, ref, hub && k == n) < 0) {
			failf(&f, "registry", "%s", g.err);
		} else if (resolve(&g, ref, r, arch, &body, &len, digest, &f) == 0) {
			struct blob_source src = {reg_open, &g, "registry"};
			test_phase("pull-manifest");
			int rc = image_fetch(&src, ref, digest, body, len, rootfs_fd, sidecar, slen);
			free(body);
			regclient_close(&g);
			return rc;
		}
		regclient_close(&g);
		if (k + 1 < total)
			note("mirror %s failed (%s); trying the next source", base, f.msg);
	}
	fatal(f.area[0] ? f.area : "registry", "%s", f.msg[0] ? f.msg : "pull failed");
	return 1;
}
