/* libmbedcrypto for the dynamic build, opened on the first call
 * (lazylib.h): sha256 and base64 serve pull, load, unpack and login only,
 * and each library the loader maps costs every start, a box's too, its
 * own mappings and page faults (issue 16). Every mbedcrypto function kern
 * calls, with the prototype of mbedtls's headers, forwarding to the
 * library's own. */
#ifndef KERN_STATIC
#include <mbedtls/base64.h>
#include <mbedtls/sha256.h>

#include "lazy/lazylib.h"
#include "lazylib_sonames.h"

static struct {
	__typeof__(mbedtls_sha256_init) *init;
	__typeof__(mbedtls_sha256_free) *free_;
	__typeof__(mbedtls_sha256_clone) *clone;
	__typeof__(mbedtls_sha256_starts_ret) *starts;
	__typeof__(mbedtls_sha256_update_ret) *update;
	__typeof__(mbedtls_sha256_finish_ret) *finish;
	__typeof__(mbedtls_sha256_ret) *sha256;
	__typeof__(mbedtls_base64_encode) *base64_encode;
} fn;

static const struct lazy_sym syms[] = {
	{"mbedtls_sha256_init", (void **)&fn.init},
	{"mbedtls_sha256_free", (void **)&fn.free_},
	{"mbedtls_sha256_clone", (void **)&fn.clone},
	{"mbedtls_sha256_starts_ret", (void **)&fn.starts},
	{"mbedtls_sha256_update_ret", (void **)&fn.update},
	{"mbedtls_sha256_finish_ret", (void **)&fn.finish},
	{"mbedtls_sha256_ret", (void **)&fn.sha256},
	{"mbedtls_base64_encode", (void **)&fn.base64_encode},
};

static struct lazylib lib = {.soname = KERN_MBEDCRYPTO_SONAME,
				.area = "image",
				.users = "a pull, load, unpack or login",
				.syms = syms,
				.nsyms = sizeof syms / sizeof syms[0]};


void mbedtls_sha256_init(mbedtls_sha256_context *ctx)
{
	lazylib_ready(&lib);
	fn.init(ctx);
}

void mbedtls_sha256_free(mbedtls_sha256_context *ctx)
{
	lazylib_ready(&lib);
	fn.free_(ctx);
}

void mbedtls_sha256_clone(mbedtls_sha256_context *dst, const mbedtls_sha256_context *src)
{
	lazylib_ready(&lib);
	fn.clone(dst, src);
}

int mbedtls_sha256_starts_ret(mbedtls_sha256_context *ctx, int is224)
{
	lazylib_ready(&lib);
	return fn.starts(ctx, is224);
}

int mbedtls_sha256_update_ret(mbedtls_sha256_context *ctx, const unsigned char *input, size_t ilen)
{
	lazylib_ready(&lib);
	return fn.update(ctx, input, ilen);
}

int mbedtls_sha256_finish_ret(mbedtls_sha256_context *ctx, unsigned char output[32])
{
	lazylib_ready(&lib);
	return fn.finish(ctx, output);
}

int mbedtls_sha256_ret(const unsigned char *input, size_t ilen, unsigned char output[32], int is224)
{
	lazylib_ready(&lib);
	return fn.sha256(input, ilen, output, is224);
}

int mbedtls_base64_encode(unsigned char *dst, size_t dlen, size_t *olen, const unsigned char *src,
			  size_t slen)
{
	lazylib_ready(&lib);
	return fn.base64_encode(dst, dlen, olen, src, slen);
}
#endif
