/* Fetching an image into a rootfs directory: the manifest (from a registry
 * or its mirrors, or from a local layout for `kern load`), the mandatory
 * config, then each layer in ONE streaming pass: download -> sha256 of the
 * compressed bytes -> unpack_stage (decompress, diff_id, vet, extract into
 * staging) -> commit only when both digests verify. */
#ifndef KERN_IMAGEPULL_H
#define KERN_IMAGEPULL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/ref.h"

/* An open blob: read until 0 (end) or -1 (why in the source). */
struct blob_stream {
	ssize_t (*read)(void *ctx, void *buf, size_t len);
	void (*close)(void *ctx);
	const char *(*error)(void *ctx);	/* why the last read failed */
	void *ctx;
};

/* Where blobs come from. open returns 0, or -1 with why filled. */
struct blob_source {
	int (*open)(void *src, const char *digest, uint64_t max, long timeout_s,
		    struct blob_stream *s, char *why, size_t wlen);
	void *src;
	const char *area;	/* error area for transport failures: "registry" or "image" */
};

/* Fetch the image described by manifest (already verified against
 * manifest_digest) into rootfs_fd. On success *sidecar holds the rendered
 * `.image` content. Returns 0, or 1 after printing the error line. */
int image_fetch(const struct blob_source *src, const char *ref, const char *manifest_digest,
		const char *manifest, size_t mlen, int rootfs_fd, char **sidecar, size_t *slen);

/* Pull ref from its registry (mirrors first, per KERN_REGISTRY_MIRRORS)
 * into rootfs_fd. arch NULL = the host's. Returns 0, or 1 after printing
 * the error line. */
int image_pull(const char *ref, const struct image_ref *r, const char *arch, int rootfs_fd,
	       char **sidecar, size_t *slen);

#endif
