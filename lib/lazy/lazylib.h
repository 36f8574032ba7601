/* Libraries that only pull, load, unpack and login use (libcurl,
 * libarchive, libmbedcrypto, zlib, libzstd), opened on first use in the
 * dynamic build, so that a box start never pays for the loader mapping
 * and resolving them and their dependency trees (about forty libraries
 * through libcurl's TLS, LDAP and Kerberos, libarchive's XML and codecs;
 * and every library mapped is mappings, relocations and page faults on
 * each start; issue 16). The static build links them as usual.
 *
 * lazy/<library>.c define every function of the library
 * that kern calls, under its own name and with the prototype of the
 * library's header, so the compiler checks each against the header and
 * the callers read the same in both builds; a call the shim lacks fails
 * the dynamic link with "undefined reference". */
#ifndef KERN_LAZYLIB_H
#define KERN_LAZYLIB_H

#include <stddef.h>

struct lazy_sym {
	const char *name;
	void **slot;		/* *(void **)&fnptr: the dlsym idiom POSIX documents */
};

struct lazylib {
	const char *soname;	/* build/gen/lazylib_sonames.h (mk/lazylib.mk) */
	const char *area;	/* of the error line (diag.h) */
	const char *users;	/* which commands need it, for the hint */
	const struct lazy_sym *syms;
	size_t nsyms;
	int opened;		/* lazylib_ready()'s, 0 in the initializer */
};

/* dlopen the library and fill every slot, once per process, whichever
 * thread asks first; every shim function calls it before forwarding.
 * Cannot fail quietly: when the library or a symbol is missing it prints
 * `error: <area>: cannot load <soname>: <why>` and a hint, and exits 1 (a
 * pull failure, box-cli.md §6.1). */
void lazylib_ready(struct lazylib *lib);

#endif
