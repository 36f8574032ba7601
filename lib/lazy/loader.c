/* The loader behind lazy/curl.c and lazy/archive.c (lazylib.h). The
 * static build links the libraries themselves and compiles none of it. */
#ifndef KERN_STATIC
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/diag.h"
#include "lazy/lazylib.h"

static void lazylib_open(const struct lazylib *lib)
{
	/* RTLD_NOW: a symbol missing from an unexpected build of the library
	 * fails here, once, and not in the middle of a pull. RTLD_LOCAL: its
	 * symbols fill the slots below and serve no other lookup. */
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	const char *why = h ? NULL : dlerror();
	for (size_t i = 0; h && !why && i < lib->nsyms; i++)
		if (!(*lib->syms[i].slot = dlsym(h, lib->syms[i].name)))
			why = dlerror();
	if (!h || why) {
		fatal(lib->area, "cannot load %s: %s", lib->soname, why ? why : "symbol not found");
		hint("this kern is the dynamic build, which loads %s when %s needs it: install it, "
		     "or use the static kern (make static)",
		     lib->soname, lib->users);
		exit(EXIT_CLI);
	}
}

/* One mutex for every library: each is opened once, and only pull,
 * load and unpack threads ever wait here. */
static pthread_mutex_t opening = PTHREAD_MUTEX_INITIALIZER;

void lazylib_ready(struct lazylib *lib)
{
	if (__atomic_load_n(&lib->opened, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&opening);
	if (!lib->opened) {
		lazylib_open(lib);
		__atomic_store_n(&lib->opened, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&opening);
}
#endif
