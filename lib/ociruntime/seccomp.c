/* linux.seccomp into classic BPF (seccomp.h), compiled by libseccomp as
 * runc compiles it: kern reads and checks the JSON (every field it cannot
 * honour refused by name), hands each rule to seccomp_rule_add_array()
 * and exports libseccomp's program, which kern box loads beside its own
 * filter. The rules are runc's:
 *   - names libseccomp does not know for this architecture are skipped;
 *   - a rule whose action is the default action is skipped (libseccomp
 *     refuses it);
 *   - args with distinct indexes are one rule (all must match), args
 *     that repeat an index are one rule each (any may match);
 *   - what several rules for one system call mean is libseccomp's.
 * seccomp(2) itself is always allowed by this program: kern loads its own
 * filter after it and decides on seccomp(2) there (a filter can only
 * take permissions away). Only this machine's architecture is compiled;
 * calls of another (x86 or x32 on x86_64) kill the process, as kern's
 * own filter does. */
#include <errno.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/json.h"
#include "ociruntime/seccomp.h"

#define MAX_RULES 8192
#define MAX_DEPTH 16

/* The comparison operators in libseccomp's order (enum scmp_compare
 * starts at SCMP_CMP_NE = 1). */
static const char *const op_names[] = {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
				       "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL};

struct c {
	const struct json *j;
	char *why;
	size_t wl;
	uint32_t dflt;
	scmp_filter_ctx ctx;
	int nrules;
};

static int fail(struct c *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct c *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->wl, fmt, ap);
	va_end(ap);
	return -1;
}

/* An action name (with its errno) as a SECCOMP_RET_* value, which is
 * libseccomp's SCMP_ACT_* value. */
static int action(struct c *c, int tok, const char *path, int have_errno, uint64_t err, uint32_t *out)
{
	char a[32];
	if (json_string(c->j, tok, a, sizeof a) < 0)
		return fail(c, "%s must be an action name", path);
	if (err > 4095)
		return fail(c, "%s: an errno return above 4095 is not supported", path);
	if (!strcmp(a, "SCMP_ACT_KILL") || !strcmp(a, "SCMP_ACT_KILL_THREAD"))
		*out = SCMP_ACT_KILL_THREAD;
	else if (!strcmp(a, "SCMP_ACT_KILL_PROCESS"))
		*out = SCMP_ACT_KILL_PROCESS;
	else if (!strcmp(a, "SCMP_ACT_TRAP"))
		*out = SCMP_ACT_TRAP;
	else if (!strcmp(a, "SCMP_ACT_ERRNO"))
		*out = SCMP_ACT_ERRNO((uint32_t)(have_errno ? err : EPERM));
	else if (!strcmp(a, "SCMP_ACT_ALLOW"))
		*out = SCMP_ACT_ALLOW;
	else if (!strcmp(a, "SCMP_ACT_LOG"))
		*out = SCMP_ACT_LOG;
	else if (!strcmp(a, "SCMP_ACT_TRACE") || !strcmp(a, "SCMP_ACT_NOTIFY"))
		return fail(c, "%s: %s is not supported (kern runs no tracer and no seccomp agent)", path, a);
	else
		return fail(c, "%s: unknown action '%s'", path, a);
	return 0;
}

static int field(const struct c *c, int obj, const char *key)
{
	int v = json_get(c->j, obj, key);
	if (v < 0)
		return -1;
	const jsmntok_t *t = &c->j->tok[v];
	return t->type == JSMN_PRIMITIVE && t->end - t->start == 4 && !memcmp(c->j->js + t->start, "null", 4)
		       ? -1
		       : v;
}

static int u64_field(struct c *c, int obj, const char *key, const char *path, uint64_t *out, int *given)
{
	int f = field(c, obj, key);
	*given = f >= 0;
	if (f >= 0 && json_u64(c->j, f, out) < 0)
		return fail(c, "%s.%s must be an integer from 0 to 2^64-1", path, key);
	return 0;
}

static int parse_args(struct c *c, int args, const char *path, struct scmp_arg_cmp *conds, int *n)
{
	*n = 0;
	if (args < 0)
		return 0;
	if (!json_is_array(c->j, args) || c->j->tok[args].size > 6)
		return fail(c, "%s.args must be an array of at most 6 comparisons", path);
	for (int m = 0; m < c->j->tok[args].size; m++) {
		int e = json_elem(c->j, args, m), given, f;
		char ap[128], op[32];
		uint64_t idx;
		struct scmp_arg_cmp *k = &conds[(*n)++];
		/* An absent value or valueTwo is 0, as runc reads the spec's
		 * omitempty fields. */
		*k = (struct scmp_arg_cmp){0};
		snprintf(ap, sizeof ap, "%s.args[%d]", path, m);
		if (u64_field(c, e, "index", ap, &idx, &given) < 0 || !given || idx > 5)
			return fail(c, "%s.index must be an integer from 0 to 5", ap);
		k->arg = (unsigned)idx;
		/* MASKED_EQ: value is the mask, valueTwo the datum, as
		 * runc passes them (datum_a, datum_b). */
		if (u64_field(c, e, "value", ap, &k->datum_a, &given) < 0 ||
		    u64_field(c, e, "valueTwo", ap, &k->datum_b, &given) < 0)
			return -1;
		if ((f = field(c, e, "op")) < 0 || json_string(c->j, f, op, sizeof op) < 0)
			return fail(c, "%s.op is missing", ap);
		int o = 0;
		while (op_names[o] && strcmp(op_names[o], op) != 0)
			o++;
		if (!op_names[o])
			return fail(c, "%s.op: unknown operator '%s'", ap, op);
		k->op = (enum scmp_compare)(SCMP_CMP_NE + o);
	}
	return 0;
}

static int add_rule(struct c *c, const char *path, const char *name, int nr, uint32_t act,
		    const struct scmp_arg_cmp *conds, int n)
{
	if (c->nrules++ >= MAX_RULES)
		return fail(c, "linux.seccomp: more than %d rules", MAX_RULES);
	int rc = seccomp_rule_add_array(c->ctx, act, nr, (unsigned)n, conds);
	if (rc < 0)
		return fail(c, "%s: libseccomp refused the rule for %s: %s", path, name, strerror(-rc));
	return 0;
}

/* One syscalls[] entry into rules. */
static int parse_entry(struct c *c, int s, int k)
{
	char path[64], name[128];
	uint64_t err = 0;
	int given, f;
	struct scmp_arg_cmp conds[6];
	int nconds;
	uint32_t act = 0;
	snprintf(path, sizeof path, "linux.seccomp.syscalls[%d]", k);
	if (u64_field(c, s, "errnoRet", path, &err, &given) < 0)
		return -1;
	if ((f = field(c, s, "action")) < 0)
		return fail(c, "%s.action is missing", path);
	char apath[80];
	snprintf(apath, sizeof apath, "%s.action", path);
	if (action(c, f, apath, given, err, &act) < 0 || parse_args(c, field(c, s, "args"), path, conds, &nconds) < 0)
		return -1;
	int names = field(c, s, "names");
	if (names < 0 || !json_is_array(c->j, names))
		return fail(c, "%s.names must be an array of names", path);
	/* Distinct indexes: all must hold. A repeated index: any may. */
	int distinct = 1;
	for (int a = 0; a < nconds; a++)
		for (int b = 0; b < a; b++)
			distinct &= conds[a].arg != conds[b].arg;
	for (int m = 0; m < c->j->tok[names].size; m++) {
		if (json_string(c->j, json_elem(c->j, names, m), name, sizeof name) < 0)
			return fail(c, "%s.names[%d] is not a system call name", path, m);
		if (act == c->dflt)
			continue;
		/* Negative: unknown, or a call of another architecture only. */
		int nr = seccomp_syscall_resolve_name(name);
		if (nr < 0 || nr == __NR_seccomp)
			continue;
		if (distinct ? add_rule(c, path, name, nr, act, conds, nconds) < 0 : 0)
			return -1;
		for (int a = 0; !distinct && a < nconds; a++)
			if (add_rule(c, path, name, nr, act, &conds[a], 1) < 0)
				return -1;
	}
	return 0;
}

/* libseccomp's program for the rules, exported through a memfd (its
 * 2.5 API writes to a file descriptor). */
static int export(struct c *c, struct sock_filter **prog, unsigned *n)
{
	int fd = memfd_create("kern-oci-seccomp", MFD_CLOEXEC), rc;
	if (fd < 0)
		return fail(c, "memfd_create: %s", strerror(errno));
	if ((rc = seccomp_export_bpf(c->ctx, fd)) < 0) {
		close(fd);
		return fail(c, "linux.seccomp: libseccomp could not generate the program: %s", strerror(-rc));
	}
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof **prog) {
		close(fd);
		return fail(c, "linux.seccomp: libseccomp generated a program of %lld bytes", (long long)size);
	}
	if (size / (off_t)sizeof **prog > OCI_SECCOMP_MAX_INSNS) {
		close(fd);
		return fail(c, "linux.seccomp compiles to more than %d instructions", OCI_SECCOMP_MAX_INSNS);
	}
	*prog = malloc((size_t)size);
	if (!*prog || pread(fd, *prog, (size_t)size, 0) != size) {
		free(*prog);
		*prog = NULL;
		close(fd);
		return fail(c, "linux.seccomp: reading the generated program back: %s", strerror(errno));
	}
	close(fd);
	*n = (unsigned)(size / (off_t)sizeof **prog);
	return 0;
}

/* The filter context with the profile's default action: another
 * architecture kills the process, and no attribute of the loading thread
 * is touched (kern box loads the program, not libseccomp). */
static int start(struct c *c)
{
	int rc;
	if (!(c->ctx = seccomp_init(c->dflt)))
		return fail(c, "linux.seccomp: libseccomp refused the default action %#x", c->dflt);
	if ((rc = seccomp_attr_set(c->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(c->ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0)
		return fail(c, "linux.seccomp: seccomp_attr_set: %s", strerror(-rc));
	if (c->dflt != SCMP_ACT_ALLOW && (rc = seccomp_rule_add_array(c->ctx, SCMP_ACT_ALLOW, __NR_seccomp, 0, NULL)) < 0)
		return fail(c, "linux.seccomp: allowing seccomp(2): %s", strerror(-rc));
	return 0;
}

int oci_seccomp_compile(const char *js, size_t len, struct sock_filter **prog, unsigned *n, char *why, size_t wl)
{
	struct json j;
	const char *jwhy;
	struct c c = {.j = &j, .why = why, .wl = wl};
	int rc = -1, f, given;
	uint64_t derr = 0;
	*prog = NULL;
	*n = 0;
	if (json_parse(&j, js, len, len + 1, MAX_DEPTH, &jwhy) < 0) {
		snprintf(why, wl, "linux.seccomp is not valid JSON: %s", jwhy);
		return -1;
	}
	if ((f = field(&c, 0, "flags")) >= 0 && (!json_is_array(&j, f) || j.tok[f].size))
		fail(&c, "linux.seccomp.flags is not supported");
	else if (u64_field(&c, 0, "defaultErrnoRet", "linux.seccomp", &derr, &given) == 0 &&
		 (f = field(&c, 0, "defaultAction")) < 0)
		fail(&c, "linux.seccomp.defaultAction is missing");
	else if (f >= 0 && action(&c, f, "linux.seccomp.defaultAction", given, derr, &c.dflt) == 0 &&
		 start(&c) == 0) {
		int arr = field(&c, 0, "syscalls"), k = 0;
		if (arr >= 0 && !json_is_array(&j, arr)) {
			fail(&c, "linux.seccomp.syscalls must be an array");
			goto out;
		}
		for (; arr >= 0 && k < j.tok[arr].size; k++)
			if (parse_entry(&c, json_elem(&j, arr, k), k) < 0)
				goto out;
		rc = export(&c, prog, n);
	}
out:
	if (c.ctx)
		seccomp_release(c.ctx);
	json_free(&j);
	return rc;
}
