/* sha256 digests of blobs and layers (mbedtls), and the one digest form
 * kern accepts from a registry: "sha256:" plus 64 lowercase hex. */
#ifndef KERN_DIGEST_H
#define KERN_DIGEST_H

#include <stddef.h>
#include <mbedtls/sha256.h>

#define DIGEST_LEN 71		/* "sha256:" + 64 hex */

struct sha256 {
	mbedtls_sha256_context ctx;
};

void sha256_begin(struct sha256 *h);
void sha256_feed(struct sha256 *h, const void *p, size_t n);
/* Writes the 32-byte sum and releases the context. */
void sha256_end(struct sha256 *h, unsigned char sum[32]);
/* The sum of what was fed so far; h goes on. */
void sha256_peek(const struct sha256 *h, unsigned char sum[32]);
void sha256_sum(const void *p, size_t n, unsigned char sum[32]);

/* 1 if s is exactly "sha256:" + 64 lowercase hex. */
int digest_valid(const char *s);
/* Parse a valid digest into its 32 bytes; -1 if not valid. */
int digest_parse(const char *s, unsigned char sum[32]);
/* "sha256:<hex>" into out (at least DIGEST_LEN + 1 bytes). */
void digest_format(const unsigned char sum[32], char *out);
/* The 64 hex digits of a valid digest. */
const char *digest_hex(const char *digest);

#endif
