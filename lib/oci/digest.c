#include <stdint.h>
#include <string.h>

#include <mbedtls/version.h>

#include "oci/digest.h"
#include "oci/sha256_x86.h"

void sha256_begin(struct sha256 *h)
{
	mbedtls_sha256_init(&h->ctx);
	(void)mbedtls_sha256_starts_ret(&h->ctx, 0);
}

/* Whole blocks go to the SHA instructions where the CPU has them; mbedtls
 * fills a partial block first and keeps the tail. mbedtls 2.x leaves its
 * context's fields public: the byte count in total[0] (low) and total[1]
 * (high), the working variables in state. Returns the bytes consumed. */
#if MBEDTLS_VERSION_MAJOR == 2
static size_t feed_fast(mbedtls_sha256_context *c, const unsigned char *p, size_t n)
{
	size_t fill = c->total[0] & 63, lead = fill ? 64 - fill : 0;
	if (n < lead + 64 || !sha256_x86_usable())
		return 0;
	(void)mbedtls_sha256_update_ret(c, p, lead);
	size_t blocks = (n - lead) / 64;
	sha256_x86_blocks(c->state, p + lead, blocks);
	uint64_t total = ((uint64_t)c->total[1] << 32 | c->total[0]) + (uint64_t)blocks * 64;
	c->total[0] = (uint32_t)total;
	c->total[1] = (uint32_t)(total >> 32);
	return lead + blocks * 64;
}
#else
static size_t feed_fast(mbedtls_sha256_context *c, const unsigned char *p, size_t n)
{
	(void)c;
	(void)p;
	(void)n;
	return 0;
}
#endif

void sha256_feed(struct sha256 *h, const void *p, size_t n)
{
	size_t done = feed_fast(&h->ctx, p, n);
	(void)mbedtls_sha256_update_ret(&h->ctx, done ? (const unsigned char *)p + done : p, n - done);
}

void sha256_end(struct sha256 *h, unsigned char sum[32])
{
	(void)mbedtls_sha256_finish_ret(&h->ctx, sum);
	mbedtls_sha256_free(&h->ctx);
}

void sha256_peek(const struct sha256 *h, unsigned char sum[32])
{
	struct sha256 copy;
	mbedtls_sha256_init(&copy.ctx);
	mbedtls_sha256_clone(&copy.ctx, &h->ctx);
	sha256_end(&copy, sum);
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
