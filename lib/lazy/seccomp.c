/* libseccomp for the dynamic build, opened on the first call (lazylib.h):
 * only kern-oci's create compiles a seccomp profile at run time (a
 * config's own; kern's programs are prebuilt), so a box start never maps
 * it. Every libseccomp function kern calls, with seccomp.h's prototype,
 * forwarding to the library's own. */
#ifndef KERN_STATIC
#include <seccomp.h>

#include "lazy/lazylib.h"
#include "lazylib_sonames.h"

static struct {
	__typeof__(seccomp_init) *init;
	__typeof__(seccomp_release) *release;
	__typeof__(seccomp_attr_set) *attr_set;
	__typeof__(seccomp_syscall_resolve_name) *resolve_name;
	__typeof__(seccomp_rule_add_array) *rule_add_array;
	__typeof__(seccomp_export_bpf) *export_bpf;
} fn;

static const struct lazy_sym syms[] = {
	{"seccomp_init", (void **)&fn.init},
	{"seccomp_release", (void **)&fn.release},
	{"seccomp_attr_set", (void **)&fn.attr_set},
	{"seccomp_syscall_resolve_name", (void **)&fn.resolve_name},
	{"seccomp_rule_add_array", (void **)&fn.rule_add_array},
	{"seccomp_export_bpf", (void **)&fn.export_bpf},
};

static struct lazylib lib = {.soname = KERN_SECCOMP_SONAME,
				.area = "oci",
				.users = "kern-oci's create of a bundle with linux.seccomp",
				.syms = syms,
				.nsyms = sizeof syms / sizeof syms[0]};

scmp_filter_ctx seccomp_init(uint32_t def_action)
{
	lazylib_ready(&lib);
	return fn.init(def_action);
}

void seccomp_release(scmp_filter_ctx ctx)
{
	lazylib_ready(&lib);
	fn.release(ctx);
}

int seccomp_attr_set(scmp_filter_ctx ctx, enum scmp_filter_attr attr, uint32_t value)
{
	lazylib_ready(&lib);
	return fn.attr_set(ctx, attr, value);
}

int seccomp_syscall_resolve_name(const char *name)
{
	lazylib_ready(&lib);
	return fn.resolve_name(name);
}

int seccomp_rule_add_array(scmp_filter_ctx ctx, uint32_t action, int syscall, unsigned int arg_cnt,
			   const struct scmp_arg_cmp *arg_array)
{
	lazylib_ready(&lib);
	return fn.rule_add_array(ctx, action, syscall, arg_cnt, arg_array);
}

int seccomp_export_bpf(const scmp_filter_ctx ctx, int fd)
{
	lazylib_ready(&lib);
	return fn.export_bpf(ctx, fd);
}
#endif
