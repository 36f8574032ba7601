/* sha256 (lib/oci/digest.c): FIPS 180-4 example vectors, and the same sums
 * whatever the chunking, against mbedtls's own one-shot C compression
 * (sha256_feed hands whole blocks to the SHA instructions where the CPU
 * has them, lib/oci/sha256_x86.c). */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/sha256.h>

#include "oci/digest.h"
#include "oci/sha256_x86.h"
#include "unit.h"

static void hex_sum(const unsigned char sum[32], char out[65])
{
	char d[DIGEST_LEN + 1];
	digest_format(sum, d);
	memcpy(out, digest_hex(d), 65);
}

TEST(sha256_known_vectors)
{
	unsigned char sum[32];
	char hex[65];
	sha256_sum("", 0, sum);
	hex_sum(sum, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_sum("abc", 3, sum);
	hex_sum(sum, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_sum(two, strlen(two), sum);
	hex_sum(sum, hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* One million 'a', fed in uneven pieces. */
	static unsigned char a[1000000];
	memset(a, 'a', sizeof a);
	struct sha256 h;
	sha256_begin(&h);
	for (size_t at = 0, step = 1; at < sizeof a; at += step, step = step * 7 % 9973 + 1)
		sha256_feed(&h, a + at, at + step > sizeof a ? sizeof a - at : step);
	sha256_end(&h, sum);
	hex_sum(sum, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(sha256_any_chunking_matches_mbedtls)
{
	static unsigned char data[3 * 65536 + 77];
	unsigned seed = 12345;
	for (size_t i = 0; i < sizeof data; i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (unsigned char)(seed >> 16);
	}
	static const size_t lengths[] = {0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 4096, 65536,
					 sizeof data};
	for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
		size_t len = lengths[li];
		unsigned char want[32], got[32];
		CHECK(mbedtls_sha256_ret(data, len, want, 0) == 0);
		/* Whole; in 1..200-byte pieces; one byte, then the rest. */
		sha256_sum(data, len, got);
		CHECK(memcmp(want, got, 32) == 0);
		struct sha256 h;
		sha256_begin(&h);
		for (size_t at = 0, step = 3; at < len; at += step, step = step * 13 % 200 + 1)
			sha256_feed(&h, data + at, at + step > len ? len - at : step);
		sha256_end(&h, got);
		CHECK(memcmp(want, got, 32) == 0);
		if (len > 1) {
			sha256_begin(&h);
			sha256_feed(&h, data, 1);
			sha256_feed(&h, data + 1, len - 1);
			sha256_end(&h, got);
			CHECK(memcmp(want, got, 32) == 0);
		}
	}
	printf("# sha256: the SHA instructions %s\n",
	       sha256_x86_usable() ? "were used" : "are not on this CPU; mbedtls alone was tested");
}
