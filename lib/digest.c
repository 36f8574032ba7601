#include <string.h>

#include "digest.h"

void sha256_begin(struct sha256 *h)
{
	mbedtls_sha256_init(&h->ctx);
	(void)mbedtls_sha256_starts_ret(&h->ctx, 0);
}

void sha256_feed(struct sha256 *h, const void *p, size_t n)
{
	(void)mbedtls_sha256_update_ret(&h->ctx, p, n);
}

void sha256_end(struct sha256 *h, unsigned char sum[32])
{
	(void)mbedtls_sha256_finish_ret(&h->ctx, sum);
	mbedtls_sha256_free(&h->ctx);
}

void sha256_sum(const void *p, size_t n, unsigned char sum[32])
{
	struct sha256 h;
	sha256_begin(&h);
	sha256_feed(&h, p, n);
	sha256_end(&h, sum);
}

int digest_valid(const char *s)
{
	if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != DIGEST_LEN)
		return 0;
	for (const char *p = s + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

static int nibble(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

int digest_parse(const char *s, unsigned char sum[32])
{
	if (!digest_valid(s))
		return -1;
	for (int i = 0; i < 32; i++)
		sum[i] = (unsigned char)((unsigned)nibble(s[7 + 2 * i]) << 4 | (unsigned)nibble(s[8 + 2 * i]));
	return 0;
}

void digest_format(const unsigned char sum[32], char *out)
{
	static const char hex[] = "0123456789abcdef";
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++) {
		out[7 + 2 * i] = hex[sum[i] >> 4];
		out[8 + 2 * i] = hex[sum[i] & 15];
	}
	out[DIGEST_LEN] = 0;
}

const char *digest_hex(const char *digest)
{
	return digest + 7;
}
