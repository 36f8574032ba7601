/* libzstd for the dynamic build, opened on the first call (lazylib.h):
 * only a layer's zstd stream is decompressed (pull, load, unpack), and
 * each library the loader maps costs every start (issue 16). Every zstd
 * function kern calls, with zstd.h's prototype, forwarding to the
 * library's own. */
#ifndef KERN_STATIC
#include <zstd.h>

#include "lazy/lazylib.h"
#include "lazylib_sonames.h"

static struct {
	__typeof__(ZSTD_createDCtx) *create;
	__typeof__(ZSTD_freeDCtx) *free_;
	__typeof__(ZSTD_DCtx_setParameter) *set;
	__typeof__(ZSTD_decompressStream) *decompress;
	__typeof__(ZSTD_isError) *is_error;
	__typeof__(ZSTD_getErrorName) *error_name;
} fn;

static const struct lazy_sym syms[] = {
	{"ZSTD_createDCtx", (void **)&fn.create},
	{"ZSTD_freeDCtx", (void **)&fn.free_},
	{"ZSTD_DCtx_setParameter", (void **)&fn.set},
	{"ZSTD_decompressStream", (void **)&fn.decompress},
	{"ZSTD_isError", (void **)&fn.is_error},
	{"ZSTD_getErrorName", (void **)&fn.error_name},
};

static struct lazylib lib = {.soname = KERN_ZSTD_SONAME,
				.area = "image",
				.users = "a pull, load or unpack",
				.syms = syms,
				.nsyms = sizeof syms / sizeof syms[0]};


ZSTD_DCtx *ZSTD_createDCtx(void)
{
	lazylib_ready(&lib);
	return fn.create();
}

size_t ZSTD_freeDCtx(ZSTD_DCtx *dctx)
{
	lazylib_ready(&lib);
	return fn.free_(dctx);
}

size_t ZSTD_DCtx_setParameter(ZSTD_DCtx *dctx, ZSTD_dParameter param, int value)
{
	lazylib_ready(&lib);
	return fn.set(dctx, param, value);
}

size_t ZSTD_decompressStream(ZSTD_DCtx *zds, ZSTD_outBuffer *output, ZSTD_inBuffer *input)
{
	lazylib_ready(&lib);
	return fn.decompress(zds, output, input);
}

unsigned ZSTD_isError(size_t code)
{
	lazylib_ready(&lib);
	return fn.is_error(code);
}

const char *ZSTD_getErrorName(size_t code)
{
	lazylib_ready(&lib);
	return fn.error_name(code);
}
#endif
