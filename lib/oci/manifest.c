#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/strv.h"
#include "oci/manifest.h"

#define STR_MAX 65536		/* one Env entry, Cmd element, WorkingDir ... */
#define ARRAY_MAX 4096		/* elements of Env, Cmd, Entrypoint, ExposedPorts */

static int fail(char *why, size_t wlen, const char *msg)
{
	snprintf(why, wlen, "%s", msg);
	return -1;
}

static int parse(struct json *j, const char *body, size_t len, size_t max, char *why, size_t wlen)
{
	const char *w;
	if (json_parse(j, body, len, max, JSON_DEPTH, &w) < 0) {
		snprintf(why, wlen, "%s", w);
		return -1;
	}
	if (!json_is_object(j, 0)) {
		json_free(j);
		return fail(why, wlen, "not a JSON object");
	}
	return 0;
}

static int media_type(const struct json *j, int obj, char *out, size_t len)
{
	int t = json_get(j, obj, "mediaType");
	out[0] = 0;
	if (t < 0)
		return 0;
	return json_string(j, t, out, len);
}

int manifest_kind(const char *body, size_t len, const char *content_type, enum manifest_kind *k,
		  char *why, size_t wlen)
{
	struct json j;
	char mt[256];
	uint64_t schema = 0;
	if (parse(&j, body, len, MANIFEST_MAX, why, wlen) < 0)
		return -1;
	int sv = json_get(&j, 0, "schemaVersion");
	if (sv >= 0 && json_u64(&j, sv, &schema) < 0)
		schema = 0;
	if (media_type(&j, 0, mt, sizeof mt) < 0) {
		json_free(&j);
		return fail(why, wlen, "mediaType is not a string");
	}
	int has_manifests = json_get(&j, 0, "manifests") >= 0;
	int has_layers = json_get(&j, 0, "layers") >= 0 || json_get(&j, 0, "config") >= 0;
	json_free(&j);
	if (schema == 1 || strstr(mt, "distribution.manifest.v1+") ||
	    (content_type && strstr(content_type, "distribution.manifest.v1+")))
		return fail(why, wlen, "schema 1 manifests are not supported");
	if (schema != 2)
		return fail(why, wlen, "schemaVersion is not 2");
	if (!mt[0] && content_type) {
		/* OCI allows mediaType to be absent: fall back to the header. */
		size_t n = strcspn(content_type, "; ");
		snprintf(mt, sizeof mt, "%.*s", (int)(n < 255 ? n : 255), content_type);
	}
	if (strcmp(mt, MT_OCI_INDEX) == 0 || strcmp(mt, MT_DOCKER_LIST) == 0) {
		*k = MK_INDEX;
		return 0;
	}
	if (strcmp(mt, MT_OCI_MANIFEST) == 0 || strcmp(mt, MT_DOCKER_MANIFEST) == 0) {
		*k = MK_MANIFEST;
		return 0;
	}
	if (!mt[0] || strcmp(mt, "application/json") == 0) {
		if (has_manifests && !has_layers) {
			*k = MK_INDEX;
			return 0;
		}
		if (has_layers && !has_manifests) {
			*k = MK_MANIFEST;
			return 0;
		}
	}
	snprintf(why, wlen, "unsupported manifest media type '%.200s'", mt[0] ? mt : "(none)");
	return -1;
}

static int descriptor(const struct json *j, int d, struct descriptor *out, char *why, size_t wlen)
{
	int dg = json_get(j, d, "digest"), sz = json_get(j, d, "size");
	char buf[128];
	if (!json_is_object(j, d))
		return fail(why, wlen, "a descriptor is not an object");
	if (json_string(j, dg, buf, sizeof buf) < 0 || !digest_valid(buf)) {
		snprintf(why, wlen, "a descriptor's digest is not sha256: plus 64 lowercase hex");
		return -1;
	}
	strcpy(out->digest, buf);
	out->size = 0;
	if (sz >= 0 && json_u64(j, sz, &out->size) < 0)
		return fail(why, wlen, "a descriptor's size is not a non-negative integer");
	return 0;
}

int index_select(const char *body, size_t len, const char *arch, char *digest, char *offered,
		 size_t olen, char *why, size_t wlen)
{
	struct json j;
	int rc = 1;
	offered[0] = 0;
	if (parse(&j, body, len, MANIFEST_MAX, why, wlen) < 0)
		return -1;
	int ms = json_get(&j, 0, "manifests");
	if (!json_is_array(&j, ms)) {
		json_free(&j);
		return fail(why, wlen, "the index has no manifests array");
	}
	for (int i = 0, e; (e = json_elem(&j, ms, i)) >= 0; i++) {
		char os[64], a[64], variant[64];
		struct descriptor d;
		int p = json_get(&j, e, "platform");
		if (!json_is_object(&j, p))
			continue;
		if (json_string(&j, json_get(&j, p, "os"), os, sizeof os) < 0 ||
		    json_string(&j, json_get(&j, p, "architecture"), a, sizeof a) < 0)
			continue;
		/* Attestation manifests carry platform unknown/unknown. */
		if (strcmp(os, "linux") != 0 || strcmp(a, "unknown") == 0)
			continue;
		if (!strstr(offered, a) && strlen(offered) + strlen(a) + 3 < olen) {
			if (offered[0])
				strcat(offered, ", ");
			strcat(offered, a);
		}
		if (rc == 0 || strcmp(a, arch) != 0)
			continue;
		/* arm64 images may say variant v8; anything else is another ABI. */
		if (json_string(&j, json_get(&j, p, "variant"), variant, sizeof variant) == 0 &&
		    !(strcmp(arch, "arm64") == 0 && strcmp(variant, "v8") == 0))
			continue;
		if (descriptor(&j, e, &d, why, wlen) < 0) {
			json_free(&j);
			return -1;
		}
		strcpy(digest, d.digest);
		rc = 0;
	}
	json_free(&j);
	return rc;
}

int manifest_parse(const char *body, size_t len, struct manifest *m, char *why, size_t wlen)
{
	struct json j;
	int rc = -1;
	memset(m, 0, sizeof *m);
	if (parse(&j, body, len, MANIFEST_MAX, why, wlen) < 0)
		return -1;
	int cfg = json_get(&j, 0, "config"), ls = json_get(&j, 0, "layers");
	if (ls < 0 || (json_is_array(&j, ls) && j.tok[ls].size == 0)) {
		rc = 1;
		goto out;
	}
	if (!json_is_array(&j, ls)) {
		fail(why, wlen, "layers is not an array");
		goto out;
	}
	if (j.tok[ls].size > LAYERS_MAX) {
		snprintf(why, wlen, "%d layers (the limit is %d)", j.tok[ls].size, LAYERS_MAX);
		goto out;
	}
	if (cfg < 0) {
		fail(why, wlen, "the manifest has no config");
		goto out;
	}
	if (descriptor(&j, cfg, &m->config, why, wlen) < 0)
		goto out;
	for (int i = 0, e; (e = json_elem(&j, ls, i)) >= 0; i++) {
		/* Foreign layers point elsewhere: never fetched, so refused. */
		if (json_get(&j, e, "urls") >= 0) {
			snprintf(why, wlen, "layer %d lists external urls", i + 1);
			goto out;
		}
		if (descriptor(&j, e, &m->layers[i], why, wlen) < 0)
			goto out;
		m->nlayers = i + 1;
	}
	rc = 0;
out:
	json_free(&j);
	return rc;
}

/* A JSON array of strings (or null) into a NULL-terminated vector. */
static int string_array(const struct json *j, int t, char ***out, const char *what, char *why,
			size_t wlen)
{
	*out = NULL;
	if (t < 0 || j->tok[t].type == JSMN_PRIMITIVE) {
		if (t >= 0 && !(j->js[j->tok[t].start] == 'n'))
			goto bad;
		return 0;
	}
	if (!json_is_array(j, t) || j->tok[t].size > ARRAY_MAX)
		goto bad;
	char **v = calloc((size_t)j->tok[t].size + 1, sizeof(char *));
	if (!v)
		return fail(why, wlen, "out of memory");
	for (int i = 0; i < j->tok[t].size; i++) {
		v[i] = json_strdup(j, json_elem(j, t, i), STR_MAX);
		if (!v[i]) {
			for (int k = 0; k < i; k++)
				free(v[k]);
			free(v);
			goto bad;
		}
	}
	*out = v;
	return 0;
bad:
	snprintf(why, wlen, "config %s is not an array of strings", what);
	return -1;
}

static int string_field(const struct json *j, int t, char **out, const char *what, char *why,
			size_t wlen)
{
	if (t < 0 || (j->tok[t].type == JSMN_PRIMITIVE && j->js[j->tok[t].start] == 'n')) {
		*out = strdup("");
	} else {
		*out = json_strdup(j, t, STR_MAX);
		if (!*out) {
			snprintf(why, wlen, "config %s is not a string", what);
			return -1;
		}
	}
	return *out ? 0 : fail(why, wlen, "out of memory");
}

int config_parse(const char *body, size_t len, struct image_meta *meta, char *why, size_t wlen)
{
	struct json j;
	memset(meta, 0, sizeof *meta);
	if (parse(&j, body, len, CONFIG_MAX, why, wlen) < 0)
		return -1;
	int c = json_get(&j, 0, "config");
	if (c >= 0 && !json_is_object(&j, c) &&
	    !(j.tok[c].type == JSMN_PRIMITIVE && j.js[j.tok[c].start] == 'n')) {
		fail(why, wlen, "config.config is not an object");
		goto bad;
	}
	if (!json_is_object(&j, c))
		c = -1;
	if (string_array(&j, c < 0 ? -1 : json_get(&j, c, "Entrypoint"), &meta->entrypoint,
			 "Entrypoint", why, wlen) < 0 ||
	    string_array(&j, c < 0 ? -1 : json_get(&j, c, "Cmd"), &meta->cmd, "Cmd", why, wlen) < 0 ||
	    string_array(&j, c < 0 ? -1 : json_get(&j, c, "Env"), &meta->env, "Env", why, wlen) < 0 ||
	    string_field(&j, c < 0 ? -1 : json_get(&j, c, "WorkingDir"), &meta->workdir,
			 "WorkingDir", why, wlen) < 0 ||
	    string_field(&j, c < 0 ? -1 : json_get(&j, c, "User"), &meta->user, "User", why, wlen) < 0)
		goto bad;
	env_drop_bare(meta->env);
	int ports = c < 0 ? -1 : json_get(&j, c, "ExposedPorts");
	if (json_is_object(&j, ports) && j.tok[ports].size <= ARRAY_MAX) {
		meta->expose = calloc((size_t)j.tok[ports].size + 1, sizeof(char *));
		if (!meta->expose)
			goto bad;
		int k = ports + 1, n = 0;
		for (int i = 0; i < j.tok[ports].size; i++) {
			char *p = json_strdup(&j, k, 64);
			if (p)
				meta->expose[n++] = p;
			k = json_skip(&j, k + 1);
		}
	} else if (ports >= 0 && !(j.tok[ports].type == JSMN_PRIMITIVE && j.js[j.tok[ports].start] == 'n')) {
		fail(why, wlen, "config ExposedPorts is not an object");
		goto bad;
	}
	int rootfs = json_get(&j, 0, "rootfs");
	int ids = json_get(&j, rootfs, "diff_ids");
	if (!json_is_array(&j, ids) || j.tok[ids].size > LAYERS_MAX) {
		fail(why, wlen, "config rootfs.diff_ids is missing or not an array of at most 512");
		goto bad;
	}
	meta->ndiff = j.tok[ids].size;
	meta->diff_ids = calloc((size_t)meta->ndiff + 1, sizeof *meta->diff_ids);
	if (!meta->diff_ids)
		goto bad;
	for (int i = 0; i < meta->ndiff; i++)
		if (json_string(&j, json_elem(&j, ids, i), meta->diff_ids[i], DIGEST_LEN + 1) < 0 ||
		    !digest_valid(meta->diff_ids[i])) {
			snprintf(why, wlen, "config diff_id %d is not sha256: plus 64 lowercase hex", i + 1);
			goto bad;
		}
	json_free(&j);
	return 0;
bad:
	json_free(&j);
	image_meta_free(meta);
	return -1;
}

static void free_vec(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void image_meta_free(struct image_meta *meta)
{
	free_vec(meta->entrypoint);
	free_vec(meta->cmd);
	free_vec(meta->env);
	free_vec(meta->expose);
	free(meta->workdir);
	free(meta->user);
	free(meta->diff_ids);
	memset(meta, 0, sizeof *meta);
}
