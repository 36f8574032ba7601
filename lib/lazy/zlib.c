/* zlib for the dynamic build, opened on the first call (lazylib.h): only
 * a layer's gzip stream is inflated (pull, load, unpack), and each library
 * the loader maps costs every start (issue 16). Every zlib function kern
 * calls, with zlib.h's prototype, forwarding to the library's own. */
#ifndef KERN_STATIC
#include <zlib.h>

#include "lazy/lazylib.h"
#include "lazylib_sonames.h"

static struct {
	__typeof__(inflateInit2_) *init2;
	__typeof__(inflate) *inflate_;
	__typeof__(inflateReset) *reset;
	__typeof__(inflateEnd) *end;
} fn;

static const struct lazy_sym syms[] = {
	{"inflateInit2_", (void **)&fn.init2},
	{"inflate", (void **)&fn.inflate_},
	{"inflateReset", (void **)&fn.reset},
	{"inflateEnd", (void **)&fn.end},
};

static struct lazylib lib = {.soname = KERN_Z_SONAME,
				.area = "image",
				.users = "a pull, load or unpack",
				.syms = syms,
				.nsyms = sizeof syms / sizeof syms[0]};


/* inflateInit2() is a macro for this, with the version and struct size
 * the headers were compiled with. */
int inflateInit2_(z_streamp strm, int window_bits, const char *version, int stream_size)
{
	lazylib_ready(&lib);
	return fn.init2(strm, window_bits, version, stream_size);
}

int inflate(z_streamp strm, int flush)
{
	lazylib_ready(&lib);
	return fn.inflate_(strm, flush);
}

int inflateReset(z_streamp strm)
{
	lazylib_ready(&lib);
	return fn.reset(strm);
}

int inflateEnd(z_streamp strm)
{
	lazylib_ready(&lib);
	return fn.end(strm);
}
#endif
