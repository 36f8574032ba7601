/* FZ-1: the JSON reader and everything kern-pull builds on it (manifest,
 * index, config, token bodies): no crash or over-read, bounded depth and
 * memory (ASan and UBSan watch). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "image/sidecar.h"
#include "oci/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The reader takes a length; a copy without slack catches over-reads. */
	char *buf = malloc(size ? size : 1);
	struct json j;
	const char *why;
	char w[256], d[80], offered[256];
	enum manifest_kind k;
	struct image_meta meta;
	static struct manifest m;
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (json_parse(&j, buf, size, MANIFEST_MAX, JSON_DEPTH, &why) == 0) {
		char s[64];
		json_string(&j, json_get(&j, 0, "token"), s, sizeof s);
		char *t = json_strdup(&j, json_get(&j, 0, "access_token"), 1024);
		free(t);
		json_free(&j);
	}
	manifest_kind(buf, size, "application/json", &k, w, sizeof w);
	index_select(buf, size, "amd64", d, offered, sizeof offered, w, sizeof w);
	manifest_parse(buf, size, &m, w, sizeof w);
	if (config_parse(buf, size, &meta, w, sizeof w) == 0) {
		size_t len;
		char *sc = sidecar_render("sha256:00", &meta, &len);
		struct image_config cfg;
		if (sc && sidecar_parse(sc, len, &cfg) == 0)
			image_config_free(&cfg);
		free(sc);
		image_meta_free(&meta);
	}
	free(buf);
	return 0;
}
