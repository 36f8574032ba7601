/* SHA-256 block compression with the x86 SHA extensions, for digest.c.
 *
 * Every blob and layer kern pulls is hashed twice (its digest, and the
 * diff_id of the uncompressed stream), and mbedtls 2.28 compresses blocks
 * in plain C: on a layer pull that was half of kern's CPU time. Where the
 * CPU has the SHA extensions, digest.c hands whole blocks to this instead
 * and leaves the rest (buffering, padding, the sum) to mbedtls. */
#ifndef KERN_SHA256_X86_H
#define KERN_SHA256_X86_H

#include <stddef.h>
#include <stdint.h>

/* 1 when this CPU can run sha256_x86_blocks (x86_64 with the SHA,
 * SSSE3 and SSE4.1 instructions); 0 elsewhere, always on other
 * architectures. */
int sha256_x86_usable(void);

/* Compress blocks 64-byte blocks at p into state (a..h, as FIPS 180-4
 * names the working variables; mbedtls keeps them in the same order). */
void sha256_x86_blocks(uint32_t state[8], const unsigned char *p, size_t blocks);

#endif
