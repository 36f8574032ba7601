#include "oci/sha256_x86.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>

int sha256_x86_usable(void)
{
	static int usable = -1;
	unsigned a, b, c, d;
	if (usable >= 0)
		return usable;
	usable = 0;
	/* Leaf 1: ECX bit 9 SSSE3, bit 19 SSE4.1; leaf 7: EBX bit 29 SHA. */
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 9)) && (c & (1u << 19)) &&
	    __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29)))
		usable = 1;
	return usable;
}

/* FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
static const uint32_t round_k[64] __attribute__((aligned(16))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* SHA256RNDS2 takes the working variables as two registers, (A,B,E,F)
 * and (C,D,G,H), A in the highest lane; the message words are big-endian;
 * each quad of rounds uses four schedule words, the last twelve quads
 * computing theirs with SHA256MSG1 and SHA256MSG2. */
__attribute__((target("sha,ssse3,sse4.1"))) void sha256_x86_blocks(uint32_t state[8],
								  const unsigned char *p,
								  size_t blocks)
{
	const __m128i big_endian = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
	__m128i abcd = _mm_loadu_si128((const __m128i *)(const void *)&state[0]);
	__m128i efgh = _mm_loadu_si128((const __m128i *)(const void *)&state[4]);
	abcd = _mm_shuffle_epi32(abcd, 0xB1);	/* lanes b a d c */
	efgh = _mm_shuffle_epi32(efgh, 0x1B);	/* lanes h g f e */
	__m128i abef = _mm_alignr_epi8(abcd, efgh, 8);	/* lanes f e b a */
	__m128i cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);	/* lanes h g d c */

	for (; blocks > 0; blocks--, p += 64) {
		const __m128i abef_in = abef, cdgh_in = cdgh;
		__m128i w[4];	/* w[q % 4]: schedule words 4q .. 4q+3 */
		for (size_t i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)),
						big_endian);
		for (size_t q = 0; q < 16; q++) {
			if (q >= 4) {
				/* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16];
				 * w[q%4] still holds W[4q-16..], w[(q+1)%4] W[4q-12..],
				 * w[(q+2)%4] W[4q-8..], w[(q+3)%4] W[4q-4..]. */
				__m128i x = _mm_sha256msg1_epu32(w[q & 3], w[(q + 1) & 3]);
				x = _mm_add_epi32(x, _mm_alignr_epi8(w[(q + 3) & 3], w[(q + 2) & 3], 4));
				w[q & 3] = _mm_sha256msg2_epu32(x, w[(q + 3) & 3]);
			}
			__m128i wk = _mm_add_epi32(w[q & 3],
						   _mm_load_si128((const __m128i *)(const void *)&round_k[4 * q]));
			/* Two rounds each; after the pair the registers are back in
			 * their roles. */
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
		}
		abef = _mm_add_epi32(abef, abef_in);
		cdgh = _mm_add_epi32(cdgh, cdgh_in);
	}

	abcd = _mm_shuffle_epi32(abef, 0x1B);	/* lanes a b e f */
	efgh = _mm_shuffle_epi32(cdgh, 0xB1);	/* lanes g h c d */
	_mm_storeu_si128((__m128i *)(void *)&state[0], _mm_blend_epi16(abcd, efgh, 0xF0));
	_mm_storeu_si128((__m128i *)(void *)&state[4], _mm_alignr_epi8(efgh, abcd, 8));
}

#else

int sha256_x86_usable(void)
{
	return 0;
}

void sha256_x86_blocks(uint32_t state[8], const unsigned char *p, size_t blocks)
{
	(void)state;
	(void)p;
	(void)blocks;
}

#endif
