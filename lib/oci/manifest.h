/* OCI and Docker schema-2 manifests, indexes (manifest lists) and image
 * configs (isolation.md §11.3), read from hostile JSON through json.h. */
#ifndef KERN_MANIFEST_H
#define KERN_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "oci/digest.h"

#define MANIFEST_MAX 8000000	/* bytes of a manifest or index */
#define CONFIG_MAX 4000000	/* bytes of a config blob */
#define LAYERS_MAX 512
#define JSON_DEPTH 64

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MANIFEST_ACCEPT MT_OCI_INDEX ", " MT_OCI_MANIFEST ", " MT_DOCKER_LIST ", " MT_DOCKER_MANIFEST

enum manifest_kind { MK_INDEX, MK_MANIFEST };

struct descriptor {
	char digest[DIGEST_LEN + 1];
	uint64_t size;
};

struct manifest {
	struct descriptor config;
	struct descriptor layers[LAYERS_MAX];
	int nlayers;
};

/* What the sidecar records, from the config. Arrays NULL-terminated;
 * entrypoint/cmd NULL when the image has none. */
struct image_meta {
	char **entrypoint, **cmd, **env, **expose;
	char *workdir, *user;
	char (*diff_ids)[DIGEST_LEN + 1];
	int ndiff;
};

/* Which kind of document body is (by its mediaType, else content_type).
 * Returns 0, or -1 with why (schema 1, unknown media type, bad JSON). */
int manifest_kind(const char *body, size_t len, const char *content_type, enum manifest_kind *k,
		  char *why, size_t wlen);

/* Choose the index entry for linux/arch, skipping `unknown` platforms.
 * Returns 0 with digest, 1 when none matches (offered lists the linux
 * architectures present, comma-separated), -1 with why. */
int index_select(const char *body, size_t len, const char *arch, char *digest, char *offered,
		 size_t olen, char *why, size_t wlen);

/* Parse an image manifest. Returns 0, 1 when it has no layers (the caller
 * diagnoses the body), or -1 with why. */
int manifest_parse(const char *body, size_t len, struct manifest *m, char *why, size_t wlen);

/* Parse a config blob. Returns 0 or -1 with why. */
int config_parse(const char *body, size_t len, struct image_meta *meta, char *why, size_t wlen);
void image_meta_free(struct image_meta *meta);

#endif
