/* Layer extraction (isolation.md §12.1): one streaming pass per layer:
 * decompress (gzip, zstd, or plain tar by magic) while hashing the
 * uncompressed stream for the diff_id, vet every member, extract beneath a
 * staging directory; then, once the caller has verified the digests, merge
 * staging into the flat rootfs applying whiteouts. Used by kern-pull,
 * `kern load` and kern-unpack. */
#ifndef KERN_UNPACK_H
#define KERN_UNPACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The compressed layer bytes, pulled by the extractor as it needs them
 * (for a pull: the read callback pumps curl and hashes the compressed
 * bytes for the blob digest). Returns bytes read, 0 at end, -1 on error
 * (the reader keeps its own reason). unpack_stage calls it from its own
 * decoding thread, never concurrently, and reads it to the end before
 * returning 0. */
struct layer_reader {
	ssize_t (*read)(void *ctx, void *buf, size_t len);
	void *ctx;
};

struct unpack_limits {
	uint64_t max_member;	/* 2 GiB */
	uint64_t max_total;	/* 2 GiB uncompressed per layer */
	uint64_t max_entries;	/* 2,000,000 */
};

/* Default limits of isolation.md §12.1 (per layer). */
extern const struct unpack_limits unpack_default_limits;

/* Extract one layer into <rootfs>/.kern-stg-<index>-<hex> (hex = the
 * digest's 64 hex digits), vetting as it goes. diff_id receives the
 * sha256 of the uncompressed stream. Returns 0, or -1 with why filled
 * ("decompression bomb", "member '../x' escapes the root", ...); on
 * failure the staging directory is already removed. */
int unpack_stage(const struct layer_reader *r, int rootfs_fd, int index, const char *hex,
		 const struct unpack_limits *lim, unsigned char diff_id[32], char *why,
		 size_t whylen);

/* Merge a verified staging directory into the rootfs (whiteouts, opaque
 * directories, replacements; never through a symlink) and remove it.
 * Returns 0 or -1 with why. */
int unpack_commit(int rootfs_fd, int index, const char *hex, char *why, size_t whylen);

/* Remove a staging directory without merging (digest mismatch). */
void unpack_abort(int rootfs_fd, int index, const char *hex);

#endif
