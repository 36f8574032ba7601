/* zlib for the dynamic build, opened on the first call (lazylib.h): only
 * a layer's gzip stream is inflated (pull, load, unpack), and each library
 * the loader maps costs every start (issue 16). Every zlib function kern
 * calls, with zlib.h's prototype, forwarding to the library's own. */
#ifndef KERN_STATIC
#include <pthread.h>
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

static const struct lazylib lib = {KERN_Z_SONAME, "image", "a pull, load or unpack", syms,
				   sizeof syms / sizeof syms[0]};

static void load(void)
{
	lazylib_open(&lib);
}

static void ready(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, load);
}

/* inflateInit2() is a macro for this, with the version and struct size
 * the headers were compiled with. */
int inflateInit2_(z_streamp strm, int window_bits, const char *version, int stream_size)
{
	ready();
	return fn.init2(strm, window_bits, version, stream_size);
}

int inflate(z_streamp strm, int flush)
{
	ready();
	return fn.inflate_(strm, flush);
}

int inflateReset(z_streamp strm)
{
	ready();
	return fn.reset(strm);
}

int inflateEnd(z_streamp strm)
{
	ready();
	return fn.end(strm);
}
#endif
