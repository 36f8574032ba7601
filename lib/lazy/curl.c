/* libcurl for the dynamic build, opened on the first call (lazylib.h):
 * only pull speaks HTTP, and libcurl's dependencies (TLS, LDAP, Kerberos,
 * SSH, IDN, ...) are most of what the loader resolved at every start.
 * Every libcurl function kern calls, with curl.h's prototype, forwarding
 * to libcurl's own. */
#ifndef KERN_STATIC
#include <curl/curl.h>
#include <stdarg.h>

#include "lazy/lazylib.h"
#include "lazylib_sonames.h"

static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_perform) *multi_perform;
	__typeof__(curl_multi_poll) *multi_poll;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
} fn;

static const struct lazy_sym syms[] = {
	{"curl_global_init", (void **)&fn.global_init},
	{"curl_easy_init", (void **)&fn.easy_init},
	{"curl_easy_setopt", (void **)&fn.easy_setopt},
	{"curl_easy_getinfo", (void **)&fn.easy_getinfo},
	{"curl_easy_strerror", (void **)&fn.easy_strerror},
	{"curl_easy_cleanup", (void **)&fn.easy_cleanup},
	{"curl_multi_init", (void **)&fn.multi_init},
	{"curl_multi_add_handle", (void **)&fn.multi_add_handle},
	{"curl_multi_remove_handle", (void **)&fn.multi_remove_handle},
	{"curl_multi_perform", (void **)&fn.multi_perform},
	{"curl_multi_poll", (void **)&fn.multi_poll},
	{"curl_multi_info_read", (void **)&fn.multi_info_read},
	{"curl_multi_cleanup", (void **)&fn.multi_cleanup},
	{"curl_slist_append", (void **)&fn.slist_append},
	{"curl_slist_free_all", (void **)&fn.slist_free_all},
};

static struct lazylib lib = {.soname = KERN_CURL_SONAME,
				.area = "pull",
				.users = "a pull",
				.syms = syms,
				.nsyms = sizeof syms / sizeof syms[0]};


CURLcode curl_global_init(long flags)
{
	lazylib_ready(&lib);
	return fn.global_init(flags);
}

CURL *curl_easy_init(void)
{
	lazylib_ready(&lib);
	return fn.easy_init();
}

/* curl.h wraps these two in type-checking macros (typecheck-gcc.h); here
 * they are the functions. */
#undef curl_easy_setopt
#undef curl_easy_getinfo

/* The one argument after the option, passed on as the type libcurl reads
 * it as: curl.h numbers every option by that type (CURLOPTTYPE_*: long,
 * object pointer, function pointer, curl_off_t, blob pointer). */
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
	CURLcode rc;
	va_list ap;
	lazylib_ready(&lib);
	va_start(ap, option);
	if (option < CURLOPTTYPE_OBJECTPOINT) {
		long n = va_arg(ap, long);
		rc = fn.easy_setopt(curl, option, n);
	} else if (option < CURLOPTTYPE_FUNCTIONPOINT || option >= CURLOPTTYPE_BLOB) {
		void *p = va_arg(ap, void *);
		rc = fn.easy_setopt(curl, option, p);
	} else if (option < CURLOPTTYPE_OFF_T) {
		void (*f)(void) = va_arg(ap, void (*)(void));
		rc = fn.easy_setopt(curl, option, f);
	} else {
		/* The same type as long on LP64 hosts, not everywhere. */
		curl_off_t off = va_arg(ap, curl_off_t);
		rc = fn.easy_setopt(curl, option, off);
	}
	va_end(ap);
	return rc;
}

/* Every CURLINFO_* takes a pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
	CURLcode rc;
	va_list ap;
	lazylib_ready(&lib);
	va_start(ap, info);
	rc = fn.easy_getinfo(curl, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

const char *curl_easy_strerror(CURLcode code)
{
	lazylib_ready(&lib);
	return fn.easy_strerror(code);
}

void curl_easy_cleanup(CURL *curl)
{
	lazylib_ready(&lib);
	fn.easy_cleanup(curl);
}

CURLM *curl_multi_init(void)
{
	lazylib_ready(&lib);
	return fn.multi_init();
}

CURLMcode curl_multi_add_handle(CURLM *multi, CURL *curl)
{
	lazylib_ready(&lib);
	return fn.multi_add_handle(multi, curl);
}

CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *curl)
{
	lazylib_ready(&lib);
	return fn.multi_remove_handle(multi, curl);
}

CURLMcode curl_multi_perform(CURLM *multi, int *running)
{
	lazylib_ready(&lib);
	return fn.multi_perform(multi, running);
}

CURLMcode curl_multi_poll(CURLM *multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds,
			  int timeout_ms, int *ret)
{
	lazylib_ready(&lib);
	return fn.multi_poll(multi, extra_fds, extra_nfds, timeout_ms, ret);
}

CURLMsg *curl_multi_info_read(CURLM *multi, int *msgs_in_queue)
{
	lazylib_ready(&lib);
	return fn.multi_info_read(multi, msgs_in_queue);
}

CURLMcode curl_multi_cleanup(CURLM *multi)
{
	lazylib_ready(&lib);
	return fn.multi_cleanup(multi);
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string)
{
	lazylib_ready(&lib);
	return fn.slist_append(list, string);
}

void curl_slist_free_all(struct curl_slist *list)
{
	lazylib_ready(&lib);
	fn.slist_free_all(list);
}
#endif
