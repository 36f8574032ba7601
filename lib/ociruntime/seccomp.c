/* linux.seccomp into classic BPF (seccomp.h), by kern itself: the
 * release binary is static against musl-built libraries and libseccomp
 * is a build-time tool here (tools/seccomp-gen), so the profile is
 * compiled with the same pinned system call tables kern's own programs
 * are built from. The rules are runc's (as libseccomp applies them):
 *   - names this architecture does not have are skipped (runc ignores a
 *     name libseccomp does not know);
 *   - a rule whose action is the default action is skipped;
 *   - args with distinct indexes are one rule (all must match), args
 *     that repeat an index are one rule each (any may match);
 *   - for one system call, a rule without args decides alone (the first
 *     one, when there are several); otherwise the strictest of its rules
 *     with args that matches, else the default action.
 * seccomp(2) itself is always allowed by this program: kern loads its own
 * filter after it and decides on seccomp(2) there (a filter can only
 * take permissions away). Only this machine's architecture is compiled;
 * calls of another (x86 or x32 on x86_64) are killed, as kern's own
 * filter kills them. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "base/json.h"
#include "ociruntime/seccomp.h"

struct oci_syscall {
	const char *name;
	int nr;
};
#include "oci_syscalls.h"

#if defined(__x86_64__)
#define TABLE oci_syscalls_x86_64
#define NATIVE_AUDIT AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TABLE oci_syscalls_aarch64
#define NATIVE_AUDIT AUDIT_ARCH_AARCH64
#else
/* cppcheck-suppress preprocessorErrorDirective */
#error "kern compiles seccomp profiles for x86_64 and aarch64 only"
#endif

#define MAX_RULES 8192
#define MAX_DEPTH 16

enum op { OP_NE, OP_LT, OP_LE, OP_EQ, OP_GE, OP_GT, OP_MASKED_EQ };
static const char *const op_names[] = {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
				       "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL};

struct cond {
	unsigned idx;
	enum op op;
	uint64_t value, two;
};

struct rule {
	int nr;
	uint32_t action;
	int ncond;
	struct cond cond[6];
};

struct c {
	const struct json *j;
	char *why;
	size_t wl;
	uint32_t dflt;
	struct rule *rules;
	int nrules;
	struct sock_filter *p;
	unsigned n;
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

int oci_syscall_nr(const char *name)
{
	for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
		if (!strcmp(TABLE[i].name, name))
			return TABLE[i].nr;
	return -1;
}

/* An action name (with its errno) as a SECCOMP_RET_* value. */
static int action(struct c *c, int tok, const char *path, int have_errno, uint64_t err, uint32_t *out)
{
	char a[32];
	if (json_string(c->j, tok, a, sizeof a) < 0)
		return fail(c, "%s must be an action name", path);
	if (err > 4095)
		return fail(c, "%s: an errno return above 4095 is not supported", path);
	if (!strcmp(a, "SCMP_ACT_KILL") || !strcmp(a, "SCMP_ACT_KILL_THREAD"))
		*out = SECCOMP_RET_KILL_THREAD;
	else if (!strcmp(a, "SCMP_ACT_KILL_PROCESS"))
		*out = SECCOMP_RET_KILL_PROCESS;
	else if (!strcmp(a, "SCMP_ACT_TRAP"))
		*out = SECCOMP_RET_TRAP;
	else if (!strcmp(a, "SCMP_ACT_ERRNO"))
		*out = SECCOMP_RET_ERRNO | (uint32_t)(have_errno ? err : EPERM);
	else if (!strcmp(a, "SCMP_ACT_ALLOW"))
		*out = SECCOMP_RET_ALLOW;
	else if (!strcmp(a, "SCMP_ACT_LOG"))
		*out = SECCOMP_RET_LOG;
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

static int parse_args(struct c *c, int args, const char *path, struct cond *conds, int *n)
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
		struct cond *k = &conds[(*n)++];
		snprintf(ap, sizeof ap, "%s.args[%d]", path, m);
		if (u64_field(c, e, "index", ap, &idx, &given) < 0 || !given || idx > 5)
			return fail(c, "%s.index must be an integer from 0 to 5", ap);
		k->idx = (unsigned)idx;
		if (u64_field(c, e, "value", ap, &k->value, &given) < 0 ||
		    u64_field(c, e, "valueTwo", ap, &k->two, &given) < 0)
			return -1;
		if ((f = field(c, e, "op")) < 0 || json_string(c->j, f, op, sizeof op) < 0)
			return fail(c, "%s.op is missing", ap);
		int o = 0;
		while (op_names[o] && strcmp(op_names[o], op) != 0)
			o++;
		if (!op_names[o])
			return fail(c, "%s.op: unknown operator '%s'", ap, op);
		k->op = (enum op)o;
	}
	return 0;
}

static int add_rule(struct c *c, int nr, uint32_t act, const struct cond *conds, int n)
{
	if (c->nrules >= MAX_RULES)
		return fail(c, "linux.seccomp: more than %d rules", MAX_RULES);
	struct rule *r = &c->rules[c->nrules++];
	r->nr = nr;
	r->action = act;
	r->ncond = n;
	memcpy(r->cond, conds, sizeof *conds * (size_t)n);
	return 0;
}

/* One syscalls[] entry into rules. */
static int parse_entry(struct c *c, int s, int k)
{
	char path[64], name[128];
	uint64_t err = 0;
	int given, f;
	struct cond conds[6];
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
	if (act == c->dflt)
		return 0;
	int names = field(c, s, "names");
	if (names < 0 || !json_is_array(c->j, names))
		return fail(c, "%s.names must be an array of names", path);
	/* Distinct indexes: all must hold. A repeated index: any may. */
	int distinct = 1;
	for (int a = 0; a < nconds; a++)
		for (int b = 0; b < a; b++)
			distinct &= conds[a].idx != conds[b].idx;
	for (int m = 0; m < c->j->tok[names].size; m++) {
		if (json_string(c->j, json_elem(c->j, names, m), name, sizeof name) < 0)
			return fail(c, "%s.names[%d] is not a system call name", path, m);
		int nr = oci_syscall_nr(name);
		if (nr < 0 || nr == __NR_seccomp)
			continue;
		if (distinct ? add_rule(c, nr, act, conds, nconds) < 0 : 0)
			return -1;
		for (int a = 0; !distinct && a < nconds; a++)
			if (add_rule(c, nr, act, &conds[a], 1) < 0)
				return -1;
	}
	return 0;
}

static int emit(struct c *c, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (c->n >= OCI_SECCOMP_MAX_INSNS)
		return fail(c, "linux.seccomp compiles to more than %d instructions", OCI_SECCOMP_MAX_INSNS);
	c->p[c->n++] = (struct sock_filter){.code = code, .jt = jt, .jf = jf, .k = k};
	return 0;
}

/* Where a comparison step goes: on to the next step, to the mismatch
 * jump at the end of the sequence, or past it (the comparison holds). */
enum { NX, JA, OK };
struct step {
	uint16_t code;
	int hi;			/* the high word of the value (or mask, for AND) */
	int two;		/* valueTwo instead of value (MASKED_EQ's datum) */
	int t, f;
};

#define LD_HI {BPF_LD | BPF_W | BPF_ABS, 1, 0, NX, NX}
#define LD_LO {BPF_LD | BPF_W | BPF_ABS, 0, 0, NX, NX}
static const struct step seqs[][8] = {
	[OP_EQ] = {LD_HI, {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NX, JA}, LD_LO, {BPF_JMP | BPF_JEQ | BPF_K, 0, 0, OK, JA}},
	[OP_NE] = {LD_HI, {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NX, OK}, LD_LO, {BPF_JMP | BPF_JEQ | BPF_K, 0, 0, JA, OK}},
	[OP_MASKED_EQ] = {LD_HI, {BPF_ALU | BPF_AND | BPF_K, 1, 0, NX, NX}, {BPF_JMP | BPF_JEQ | BPF_K, 1, 1, NX, JA},
			  LD_LO, {BPF_ALU | BPF_AND | BPF_K, 0, 0, NX, NX}, {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, OK, JA}},
	[OP_GT] = {LD_HI, {BPF_JMP | BPF_JGT | BPF_K, 1, 0, OK, NX}, {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NX, JA}, LD_LO,
		   {BPF_JMP | BPF_JGT | BPF_K, 0, 0, OK, JA}},
	[OP_GE] = {LD_HI, {BPF_JMP | BPF_JGT | BPF_K, 1, 0, OK, NX}, {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NX, JA}, LD_LO,
		   {BPF_JMP | BPF_JGE | BPF_K, 0, 0, OK, JA}},
	[OP_LT] = {LD_HI, {BPF_JMP | BPF_JGT | BPF_K, 1, 0, JA, NX}, {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NX, OK}, LD_LO,
		   {BPF_JMP | BPF_JGE | BPF_K, 0, 0, JA, OK}},
	[OP_LE] = {LD_HI, {BPF_JMP | BPF_JGT | BPF_K, 1, 0, JA, NX}, {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NX, OK}, LD_LO,
		   {BPF_JMP | BPF_JGT | BPF_K, 0, 0, JA, OK}},
};

static uint8_t rel(int target, int at, int ja_at)
{
	int to = target == NX ? at + 1 : target == JA ? ja_at : ja_at + 1;
	return (uint8_t)(to - at - 1);
}

/* One comparison, ending in a `ja` the caller points at the next rule;
 * returns that jump's index, or -1. */
static int emit_cond(struct c *c, const struct cond *k)
{
	const struct step *s = seqs[k->op];
	int len = 0;
	while (len < 8 && s[len].code)
		len++;
	int start = (int)c->n, ja_at = start + len;
	for (int i = 0; i < len; i++) {
		uint64_t v = s[i].two ? k->two : k->value;
		uint32_t word = s[i].hi ? (uint32_t)(v >> 32) : (uint32_t)v;
		uint32_t kk = word;
		if (BPF_CLASS(s[i].code) == BPF_LD)
			/* seccomp_data.args[idx], low word first (little endian). */
			kk = (uint32_t)(16 + 8 * k->idx + (s[i].hi ? 4 : 0));
		int jump = BPF_CLASS(s[i].code) == BPF_JMP;
		if (emit(c, s[i].code, kk, jump ? rel(s[i].t, start + i, ja_at) : 0,
			 jump ? rel(s[i].f, start + i, ja_at) : 0) < 0)
			return -1;
	}
	if (emit(c, BPF_JMP | BPF_JA, 0, 0, 0) < 0)
		return -1;
	return ja_at;
}

/* The kernel's precedence of an action: lower is stricter (KILL_PROCESS,
 * the one negative value, first). */
static int32_t rank(uint32_t action)
{
	return (int32_t)(action & SECCOMP_RET_ACTION_FULL);
}

static int cmp_nr(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int generate(struct c *c)
{
	int *nrs = malloc(sizeof *nrs * (size_t)(c->nrules + 1)), nn = 0;
	unsigned *dispatch = malloc(sizeof *dispatch * (size_t)(c->nrules + 1));
	int *order = malloc(sizeof *order * (size_t)(c->nrules + 1));
	int rc = -1;
	if (!nrs || !dispatch || !order) {
		fail(c, "out of memory");
		goto out;
	}
	for (int i = 0; i < c->nrules; i++)
		nrs[nn++] = c->rules[i].nr;
	nrs[nn++] = __NR_seccomp;
	qsort(nrs, (size_t)nn, sizeof *nrs, cmp_nr);
	int u = 0;
	for (int i = 0; i < nn; i++)
		if (!u || nrs[u - 1] != nrs[i])
			nrs[u++] = nrs[i];
	nn = u;
	/* Another architecture (x86, x32): killed, as kern's own filter does. */
	if (emit(c, BPF_LD | BPF_W | BPF_ABS, 4, 0, 0) < 0 || emit(c, BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT, 1, 0) < 0 ||
	    emit(c, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0) < 0 ||
	    emit(c, BPF_LD | BPF_W | BPF_ABS, 0, 0, 0) < 0)
		goto out;
#if defined(__x86_64__)
	/* x32 numbers carry bit 30 on x86_64's audit arch. */
	if (emit(c, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1) < 0 ||
	    emit(c, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0) < 0)
		goto out;
#endif
	for (int i = 0; i < nn; i++) {
		if (emit(c, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i], 0, 1) < 0)
			goto out;
		dispatch[i] = c->n;
		if (emit(c, BPF_JMP | BPF_JA, 0, 0, 0) < 0)
			goto out;
	}
	if (emit(c, BPF_RET | BPF_K, c->dflt, 0, 0) < 0)
		goto out;
	for (int i = 0; i < nn; i++) {
		c->p[dispatch[i]].k = c->n - dispatch[i] - 1;
		/* A rule without args decides alone (libseccomp drops the
		 * others); else the strictest rule with args that matches. */
		uint32_t last = nrs[i] == __NR_seccomp ? SECCOMP_RET_ALLOW : c->dflt;
		int have_last = nrs[i] == __NR_seccomp, nr_ = 0;
		for (int r = 0; r < c->nrules; r++) {
			const struct rule *ru = &c->rules[r];
			if (ru->nr != nrs[i])
				continue;
			if (!ru->ncond && !have_last) {
				last = ru->action;
				have_last = 1;
			}
			if (ru->ncond)
				order[nr_++] = r;
		}
		for (int a = 1; a < nr_; a++)
			for (int b = a; b > 0 && rank(c->rules[order[b]].action) < rank(c->rules[order[b - 1]].action); b--) {
				int t = order[b];
				order[b] = order[b - 1];
				order[b - 1] = t;
			}
		for (int r = 0; !have_last && r < nr_; r++) {
			const struct rule *ru = &c->rules[order[r]];
			int jas[6], nj = 0;
			for (int k = 0; k < ru->ncond; k++)
				if ((jas[nj++] = emit_cond(c, &ru->cond[k])) < 0)
					goto out;
			if (emit(c, BPF_RET | BPF_K, ru->action, 0, 0) < 0)
				goto out;
			for (int k = 0; k < nj; k++)
				c->p[jas[k]].k = c->n - (unsigned)jas[k] - 1;
		}
		if (emit(c, BPF_RET | BPF_K, last, 0, 0) < 0)
			goto out;
	}
	rc = 0;
out:
	free(nrs);
	free(dispatch);
	free(order);
	return rc;
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
	c.rules = malloc(sizeof *c.rules * MAX_RULES);
	c.p = malloc(sizeof *c.p * OCI_SECCOMP_MAX_INSNS);
	if (!c.rules || !c.p) {
		fail(&c, "out of memory");
		goto out;
	}
	if ((f = field(&c, 0, "flags")) >= 0 && (!json_is_array(&j, f) || j.tok[f].size))
		fail(&c, "linux.seccomp.flags is not supported");
	else if (u64_field(&c, 0, "defaultErrnoRet", "linux.seccomp", &derr, &given) == 0 &&
		 (f = field(&c, 0, "defaultAction")) < 0)
		fail(&c, "linux.seccomp.defaultAction is missing");
	else if (f >= 0 && action(&c, f, "linux.seccomp.defaultAction", given, derr, &c.dflt) == 0) {
		int arr = field(&c, 0, "syscalls"), k = 0;
		if (arr >= 0 && !json_is_array(&j, arr)) {
			fail(&c, "linux.seccomp.syscalls must be an array");
			goto out;
		}
		for (; arr >= 0 && k < j.tok[arr].size; k++)
			if (parse_entry(&c, json_elem(&j, arr, k), k) < 0)
				goto out;
		if (generate(&c) < 0)
			goto out;
		*prog = c.p;
		*n = c.n;
		c.p = NULL;
		rc = 0;
	}
out:
	free(c.rules);
	free(c.p);
	json_free(&j);
	return rc;
}
