/* config.json, strictly (config.h). Each object's keys are checked
 * against the list of what kern-oci maps before any value is read, so an
 * unknown field and a known one kern cannot honour fail the same way:
 * one line, the field's path. Values are checked for type and bounds
 * here; what they mean for a box (paths inside the root, mount options)
 * is map.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "ociruntime/config.h"

#define MAX_DEPTH 32
#define MAX_STR 4096		/* a path, an env entry, an argument */
#define MAX_ANNOTATIONS (256u << 10)

struct p {
	const struct json *j;
	struct oci_config *c;
	char *why;
	size_t wl;
};

static int fail(struct p *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct p *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->why, p->wl, fmt, ap);
	va_end(ap);
	return -1;
}

static int tok_is(const struct p *p, int i, const char *lit)
{
	const jsmntok_t *t = &p->j->tok[i];
	size_t n = strlen(lit);
	return t->type == JSMN_PRIMITIVE && (size_t)(t->end - t->start) == n &&
	       !memcmp(p->j->js + t->start, lit, n);
}

/* A field given as null is a field not given (Go's encoders write both). */
static int given(const struct p *p, int i)
{
	return i >= 0 && !tok_is(p, i, "null");
}

/* Every key of object obj is in known; path names obj in the error. */
static int keys_only(struct p *p, int obj, const char *path, const char *const *known)
{
	if (!json_is_object(p->j, obj))
		return fail(p, "%s must be an object", path);
	int k = obj + 1;
	for (int n = 0; n < p->j->tok[obj].size; n++) {
		char key[128];
		if (json_string(p->j, k, key, sizeof key) < 0)
			return fail(p, "%s has a key longer than 127 bytes", path);
		int ok = 0;
		for (int i = 0; known[i] && !ok; i++)
			ok = !strcmp(known[i], key);
		if (!ok)
			return fail(p, "%s%s%s is not supported", path, *path ? "." : "", key);
		k = json_skip(p->j, k + 1);
	}
	return 0;
}

/* The value of key in obj, or -1 when absent or null. */
static int field(const struct p *p, int obj, const char *key)
{
	int v = json_get(p->j, obj, key);
	return given(p, v) ? v : -1;
}

static const char *str(struct p *p, int i, const char *path)
{
	char buf[MAX_STR + 1];
	if (!json_is_string(p->j, i)) {
		fail(p, "%s must be a string", path);
		return NULL;
	}
	if (json_string(p->j, i, buf, sizeof buf) < 0) {
		fail(p, "%s is longer than %d bytes or holds a NUL", path, MAX_STR);
		return NULL;
	}
	if (strv_push(&p->c->pool, buf) < 0) {
		fail(p, "out of memory");
		return NULL;
	}
	return p->c->pool.v[p->c->pool.n - 1];
}

static int u64(struct p *p, int i, const char *path, uint64_t max, uint64_t *out)
{
	if (json_u64(p->j, i, out) < 0 || *out > max)
		return fail(p, "%s must be an integer from 0 to %llu", path, (unsigned long long)max);
	return 0;
}

/* -1 (the spec's "unlimited") or 0..max: *out is UINT64_MAX for -1. */
static int limit(struct p *p, int i, const char *path, uint64_t max, uint64_t *out)
{
	if (tok_is(p, i, "-1")) {
		*out = UINT64_MAX;
		return 0;
	}
	if (json_u64(p->j, i, out) < 0 || *out > max)
		return fail(p, "%s must be -1 or an integer from 0 to %llu", path, (unsigned long long)max);
	return 0;
}

/* An integer in [lo, hi], sign allowed. */
static int small_int(const struct p *p, int i, int lo, int hi, int *out)
{
	const jsmntok_t *t = &p->j->tok[i];
	const char *s = p->j->js + t->start;
	int n = t->end - t->start, k = 0, neg = 0;
	long v = 0;
	if (t->type != JSMN_PRIMITIVE)
		return -1;
	if (n > 0 && s[0] == '-')
		neg = k = 1;
	if (k >= n || n - k > 9)
		return -1;
	for (; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		v = v * 10 + (s[k] - '0');
	}
	v = neg ? -v : v;
	if (v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int boolean(struct p *p, int i, const char *path, int *out)
{
	if (tok_is(p, i, "true"))
		*out = 1;
	else if (tok_is(p, i, "false"))
		*out = 0;
	else
		return fail(p, "%s must be true or false", path);
	return 0;
}

/* An array of strings into out[0..max), NULL-terminated when room allows. */
static int strings(struct p *p, int arr, const char *path, const char **out, int max, int *n)
{
	char ep[256];
	if (!json_is_array(p->j, arr))
		return fail(p, "%s must be an array of strings", path);
	if (p->j->tok[arr].size > max)
		return fail(p, "%s has more than %d entries", path, max);
	*n = 0;
	for (int k = 0; k < p->j->tok[arr].size; k++) {
		snprintf(ep, sizeof ep, "%s[%d]", path, k);
		if (!(out[*n] = str(p, json_elem(p->j, arr, k), ep)))
			return -1;
		(*n)++;
	}
	return 0;
}

/* An array that must be empty (or absent): kern cannot honour an entry. */
static int empty_or_absent(struct p *p, int obj, const char *key, const char *path, const char *why)
{
	int v = field(p, obj, key);
	if (v < 0)
		return 0;
	if ((json_is_array(p->j, v) || json_is_object(p->j, v)) && p->j->tok[v].size == 0)
		return 0;
	if (json_is_string(p->j, v) && json_streq(p->j, v, ""))
		return 0;
	return fail(p, "%s is not supported%s%s", path, why ? ": " : "", why ? why : "");
}

static int parse_user(struct p *p, int u)
{
	static const char *const known[] = {"uid", "gid", "umask", "additionalGids", NULL};
	uint64_t v;
	int f;
	if (keys_only(p, u, "process.user", known) < 0)
		return -1;
	if ((f = field(p, u, "uid")) >= 0 && u64(p, f, "process.user.uid", UINT32_MAX - 1, &v) == 0)
		p->c->uid = (uint32_t)v;
	else if (f >= 0)
		return -1;
	if ((f = field(p, u, "gid")) >= 0 && u64(p, f, "process.user.gid", UINT32_MAX - 1, &v) == 0)
		p->c->gid = (uint32_t)v;
	else if (f >= 0)
		return -1;
	if ((f = field(p, u, "umask")) >= 0) {
		if (u64(p, f, "process.user.umask", 0777, &v) < 0)
			return -1;
		p->c->umask = (uint32_t)v;
		p->c->umask_set = 1;
	}
	/* kern's -u takes one uid:gid. An additional gid that is the primary
	 * one (containerd writes [0] for root) grants nothing more: the
	 * kernel's group checks try the fsgid before the supplementary list.
	 * Any other group is refused. */
	if ((f = field(p, u, "additionalGids")) >= 0) {
		if (!json_is_array(p->j, f) || p->j->tok[f].size > 64)
			return fail(p, "process.user.additionalGids must be an array of at most 64 gids");
		for (int k = 0; k < p->j->tok[f].size; k++) {
			char path[64];
			snprintf(path, sizeof path, "process.user.additionalGids[%d]", k);
			if (u64(p, json_elem(p->j, f, k), path, UINT32_MAX - 1, &v) < 0)
				return -1;
			if (v != p->c->gid)
				return fail(p, "%s %llu is not supported: kern gives the process its primary group "
					    "(%u) only", path, (unsigned long long)v, (unsigned)p->c->gid);
		}
	}
	return 0;
}

static int parse_caps(struct p *p, int o)
{
	static const char *const known[] = {"bounding", "effective", "permitted", "inheritable", "ambient", NULL};
	char path[64];
	if (keys_only(p, o, "process.capabilities", known) < 0)
		return -1;
	p->c->caps_set = 1;
	for (int s = 0; s < OCI_CAP_SETS; s++) {
		int f = field(p, o, known[s]);
		snprintf(path, sizeof path, "process.capabilities.%s", known[s]);
		if (f >= 0 && strings(p, f, path, p->c->caps[s], OCI_MAX_CAPS, &p->c->ncaps[s]) < 0)
			return -1;
	}
	return 0;
}

static int parse_rlimits(struct p *p, int arr)
{
	static const char *const known[] = {"type", "soft", "hard", NULL};
	char path[64];
	if (!json_is_array(p->j, arr) || p->j->tok[arr].size > OCI_MAX_RLIMITS)
		return fail(p, "process.rlimits must be an array of at most %d objects", OCI_MAX_RLIMITS);
	for (int k = 0; k < p->j->tok[arr].size; k++) {
		struct oci_rlimit *r = &p->c->rlimits[p->c->nrlimits];
		int o = json_elem(p->j, arr, k), f;
		snprintf(path, sizeof path, "process.rlimits[%d]", k);
		if (keys_only(p, o, path, known) < 0)
			return -1;
		snprintf(path, sizeof path, "process.rlimits[%d].type", k);
		if ((f = field(p, o, "type")) < 0)
			return fail(p, "%s is missing", path);
		if (!(r->type = str(p, f, path)))
			return -1;
		snprintf(path, sizeof path, "process.rlimits[%d].soft", k);
		if ((f = field(p, o, "soft")) < 0 || u64(p, f, path, UINT64_MAX, &r->soft) < 0)
			return f < 0 ? fail(p, "%s is missing", path) : -1;
		snprintf(path, sizeof path, "process.rlimits[%d].hard", k);
		if ((f = field(p, o, "hard")) < 0 || u64(p, f, path, UINT64_MAX, &r->hard) < 0)
			return f < 0 ? fail(p, "%s is missing", path) : -1;
		p->c->nrlimits++;
	}
	return 0;
}

static int parse_process(struct p *p, int o)
{
	static const char *const known[] = {"terminal", "user", "args", "env", "cwd", "capabilities",
					    "rlimits", "noNewPrivileges", "apparmorProfile", "oomScoreAdj",
					    "selinuxLabel", NULL};
	struct oci_config *c = p->c;
	int f;
	if (keys_only(p, o, "process", known) < 0)
		return -1;
	if ((f = field(p, o, "terminal")) >= 0 && boolean(p, f, "process.terminal", &c->terminal) < 0)
		return -1;
	if ((f = field(p, o, "user")) >= 0 && parse_user(p, f) < 0)
		return -1;
	if ((f = field(p, o, "args")) < 0)
		return fail(p, "process.args is missing");
	if (strings(p, f, "process.args", c->argv_store, OCI_MAX_ARGS, &c->nargs) < 0)
		return -1;
	if (c->nargs == 0 || !*c->argv_store[0])
		return fail(p, "process.args must name a command");
	c->argv_store[c->nargs] = NULL;
	c->args = c->argv_store;
	if ((f = field(p, o, "env")) >= 0 && strings(p, f, "process.env", c->env, OCI_MAX_ENV, &c->nenv) < 0)
		return -1;
	if ((f = field(p, o, "cwd")) < 0)
		return fail(p, "process.cwd is missing");
	if (!(c->cwd = str(p, f, "process.cwd")))
		return -1;
	if ((f = field(p, o, "capabilities")) >= 0 && parse_caps(p, f) < 0)
		return -1;
	if ((f = field(p, o, "rlimits")) >= 0 && parse_rlimits(p, f) < 0)
		return -1;
	if ((f = field(p, o, "noNewPrivileges")) >= 0 && boolean(p, f, "process.noNewPrivileges", &c->nnp) < 0)
		return -1;
	if ((f = field(p, o, "apparmorProfile")) >= 0 &&
	    !(c->apparmor = str(p, f, "process.apparmorProfile")))
		return -1;
	if ((f = field(p, o, "oomScoreAdj")) >= 0) {
		if (small_int(p, f, -1000, 1000, &c->oom_adj) < 0)
			return fail(p, "process.oomScoreAdj must be an integer from -1000 to 1000");
		c->oom_adj_set = 1;
	}
	return empty_or_absent(p, o, "selinuxLabel", "process.selinuxLabel", "kern does not label with SELinux");
}

static int parse_mounts(struct p *p, int arr)
{
	static const char *const known[] = {"destination", "type", "source", "options", NULL};
	char path[64];
	if (!json_is_array(p->j, arr) || p->j->tok[arr].size > OCI_MAX_MOUNTS)
		return fail(p, "mounts must be an array of at most %d objects", OCI_MAX_MOUNTS);
	for (int k = 0; k < p->j->tok[arr].size; k++) {
		struct oci_mount *m = &p->c->mounts[p->c->nmounts];
		int o = json_elem(p->j, arr, k), f;
		snprintf(path, sizeof path, "mounts[%d]", k);
		if (keys_only(p, o, path, known) < 0)
			return -1;
		snprintf(path, sizeof path, "mounts[%d].destination", k);
		if ((f = field(p, o, "destination")) < 0)
			return fail(p, "%s is missing", path);
		if (!(m->dst = str(p, f, path)))
			return -1;
		snprintf(path, sizeof path, "mounts[%d].type", k);
		if ((f = field(p, o, "type")) >= 0 && !(m->type = str(p, f, path)))
			return -1;
		snprintf(path, sizeof path, "mounts[%d].source", k);
		if ((f = field(p, o, "source")) >= 0 && !(m->src = str(p, f, path)))
			return -1;
		snprintf(path, sizeof path, "mounts[%d].options", k);
		if ((f = field(p, o, "options")) >= 0 && strings(p, f, path, m->opts, OCI_MAX_OPTS, &m->nopts) < 0)
			return -1;
		p->c->nmounts++;
	}
	return 0;
}

static int parse_namespaces(struct p *p, int arr)
{
	static const char *const known[] = {"type", "path", NULL};
	char path[64];
	if (!json_is_array(p->j, arr) || p->j->tok[arr].size > OCI_MAX_NS)
		return fail(p, "linux.namespaces must be an array of at most %d objects", OCI_MAX_NS);
	for (int k = 0; k < p->j->tok[arr].size; k++) {
		int o = json_elem(p->j, arr, k), f;
		snprintf(path, sizeof path, "linux.namespaces[%d]", k);
		if (keys_only(p, o, path, known) < 0)
			return -1;
		snprintf(path, sizeof path, "linux.namespaces[%d].path", k);
		if ((f = field(p, o, "path")) >= 0 && !(p->c->ns_path[p->c->nns] = str(p, f, path)))
			return -1;
		snprintf(path, sizeof path, "linux.namespaces[%d].type", k);
		if ((f = field(p, o, "type")) < 0)
			return fail(p, "%s is missing", path);
		if (!(p->c->ns[p->c->nns++] = str(p, f, path)))
			return -1;
	}
	return 0;
}

static int parse_idmaps(struct p *p, int arr, const char *name, struct oci_idmap *out, int *n)
{
	static const char *const known[] = {"containerID", "hostID", "size", NULL};
	char path[64];
	if (!json_is_array(p->j, arr) || p->j->tok[arr].size > OCI_MAX_IDMAPS)
		return fail(p, "%s must be an array of at most %d objects", name, OCI_MAX_IDMAPS);
	for (int k = 0; k < p->j->tok[arr].size; k++) {
		int o = json_elem(p->j, arr, k), f;
		uint64_t *v[] = {&out[k].container, &out[k].host, &out[k].size};
		snprintf(path, sizeof path, "%s[%d]", name, k);
		if (keys_only(p, o, path, known) < 0)
			return -1;
		for (int i = 0; i < 3; i++) {
			snprintf(path, sizeof path, "%s[%d].%s", name, k, known[i]);
			if ((f = field(p, o, known[i])) < 0)
				return fail(p, "%s is missing", path);
			if (u64(p, f, path, UINT32_MAX, v[i]) < 0)
				return -1;
		}
		(*n)++;
	}
	return 0;
}

/* linux.resources.devices: kern's /dev holds only the nodes it makes, so
 * a deny-all rule is what a box already is, and an allow rule is
 * accepted only for a node kern's /dev has (mem's null, zero, full,
 * random, urandom; tty, console, ptmx; the pty slaves). */
static int parse_device_rules(struct p *p, int arr)
{
	static const char *const known[] = {"allow", "type", "major", "minor", "access", NULL};
	static const int nodes[][2] = {{1, 3}, {1, 5}, {1, 7}, {1, 8}, {1, 9}, {5, 0}, {5, 1}, {5, 2}, {136, -1}};
	char path[64];
	if (!json_is_array(p->j, arr) || p->j->tok[arr].size > 256)
		return fail(p, "linux.resources.devices must be an array of at most 256 objects");
	for (int k = 0; k < p->j->tok[arr].size; k++) {
		int o = json_elem(p->j, arr, k), f, allow = 0;
		uint64_t maj = UINT64_MAX, min = UINT64_MAX;
		snprintf(path, sizeof path, "linux.resources.devices[%d]", k);
		if (keys_only(p, o, path, known) < 0)
			return -1;
		if ((f = field(p, o, "allow")) < 0 || boolean(p, f, path, &allow) < 0)
			return fail(p, "%s.allow must be true or false", path);
		if (!allow)
			continue;
		int c_type = (f = field(p, o, "type")) >= 0 && json_streq(p->j, f, "c");
		if ((f = field(p, o, "major")) >= 0 && limit(p, f, path, 1u << 20, &maj) < 0)
			return -1;
		if ((f = field(p, o, "minor")) >= 0 && limit(p, f, path, 1u << 20, &min) < 0)
			return -1;
		int ok = 0;
		for (size_t n = 0; c_type && !ok && n < sizeof nodes / sizeof nodes[0]; n++)
			ok = maj == (uint64_t)nodes[n][0] &&
			     (nodes[n][1] < 0 ? 1 : min == (uint64_t)nodes[n][1]);
		if (!ok)
			return fail(p, "%s allows a device kern's /dev does not have (it holds null, zero, "
				    "full, random, urandom, tty, console, ptmx and pts only)", path);
	}
	return 0;
}

static int parse_resources(struct p *p, int o)
{
	static const char *const known[] = {"memory", "pids", "cpu", "devices", NULL};
	static const char *const mem_known[] = {"limit", "swap", NULL};
	static const char *const pids_known[] = {"limit", NULL};
	static const char *const cpu_known[] = {"quota", "period", "shares", NULL};
	struct oci_config *c = p->c;
	int f, g;
	if (keys_only(p, o, "linux.resources", known) < 0)
		return -1;
	if ((f = field(p, o, "memory")) >= 0) {
		if (keys_only(p, f, "linux.resources.memory", mem_known) < 0)
			return -1;
		if ((g = field(p, f, "limit")) >= 0) {
			if (limit(p, g, "linux.resources.memory.limit", INT64_MAX, &c->mem) < 0)
				return -1;
			c->mem_set = c->mem != UINT64_MAX;
		}
		if ((g = field(p, f, "swap")) >= 0) {
			if (limit(p, g, "linux.resources.memory.swap", INT64_MAX, &c->swap) < 0)
				return -1;
			c->swap_set = 1;
		}
	}
	if ((f = field(p, o, "pids")) >= 0) {
		if (keys_only(p, f, "linux.resources.pids", pids_known) < 0)
			return -1;
		if ((g = field(p, f, "limit")) >= 0) {
			if (limit(p, g, "linux.resources.pids.limit", INT64_MAX, &c->pids) < 0)
				return -1;
			c->pids_set = c->pids != UINT64_MAX && c->pids != 0;
		}
	}
	if ((f = field(p, o, "cpu")) >= 0) {
		if (keys_only(p, f, "linux.resources.cpu", cpu_known) < 0)
			return -1;
		if ((g = field(p, f, "quota")) >= 0) {
			if (limit(p, g, "linux.resources.cpu.quota", INT64_MAX, &c->cpu_quota) < 0)
				return -1;
			c->cpu_set = c->cpu_quota != UINT64_MAX && c->cpu_quota != 0;
		}
		c->cpu_period = 100000;
		if ((g = field(p, f, "period")) >= 0 &&
		    u64(p, g, "linux.resources.cpu.period", 1000000, &c->cpu_period) < 0)
			return -1;
		if (c->cpu_period < 1000)
			return fail(p, "linux.resources.cpu.period must be at least 1000 (microseconds)");
		/* 0 is "not set" (containerd writes it so); else the kernel's range. */
		if ((g = field(p, f, "shares")) >= 0 &&
		    (u64(p, g, "linux.resources.cpu.shares", 262144, &c->cpu_shares) < 0 || c->cpu_shares == 1))
			return fail(p, "linux.resources.cpu.shares must be 0 (unset) or from 2 to 262144");
	}
	if ((f = field(p, o, "devices")) >= 0 && parse_device_rules(p, f) < 0)
		return -1;
	return 0;
}

static int one_of(const char *const *tab, const char *s)
{
	for (int i = 0; tab[i]; i++)
		if (!strcmp(tab[i], s))
			return 1;
	return 0;
}

/* A profile is checked whole here (an unknown action, architecture or
 * operator, a malformed name is named) and kept as text: kern-oci
 * compiles it at create (seccomp.c). */
static int check_seccomp(struct p *p, int o)
{
	static const char *const known[] = {"defaultAction", "defaultErrnoRet", "architectures", "flags",
					    "syscalls", NULL};
	static const char *const sc_known[] = {"names", "action", "errnoRet", "args", NULL};
	static const char *const arg_known[] = {"index", "value", "valueTwo", "op", NULL};
	static const char *const actions[] = {"SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
					      "SCMP_ACT_TRAP", "SCMP_ACT_ERRNO", "SCMP_ACT_TRACE",
					      "SCMP_ACT_ALLOW", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY", NULL};
	static const char *const ops[] = {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
					  "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL};
	static const char *const arches[] = {"SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32",
					     "SCMP_ARCH_ARM", "SCMP_ARCH_AARCH64", "SCMP_ARCH_PPC64LE",
					     "SCMP_ARCH_S390X", "SCMP_ARCH_RISCV64", NULL};
	/* An engine's default profile lists hundreds of names in one entry
	 * (podman's has over 300): read them all, so that the refusal below
	 * is the one a real profile meets. */
	static const char *list[OCI_MAX_SYSCALLS];
	char path[96];
	int n = 0, f;
	if (keys_only(p, o, "linux.seccomp", known) < 0)
		return -1;
	const char *a;
	if ((f = field(p, o, "defaultAction")) < 0)
		return fail(p, "linux.seccomp.defaultAction is missing");
	if (!(a = str(p, f, "linux.seccomp.defaultAction")))
		return -1;
	if (!one_of(actions, a))
		return fail(p, "linux.seccomp.defaultAction: unknown action '%s'", a);
	if ((f = field(p, o, "architectures")) >= 0) {
		if (strings(p, f, "linux.seccomp.architectures", list, 16, &n) < 0)
			return -1;
		for (int k = 0; k < n; k++)
			if (!one_of(arches, list[k]))
				return fail(p, "linux.seccomp.architectures[%d]: unknown architecture '%s'", k, list[k]);
	}
	int arr = field(p, o, "syscalls");
	if (arr >= 0 && !json_is_array(p->j, arr))
		return fail(p, "linux.seccomp.syscalls must be an array");
	for (int k = 0; arr >= 0 && k < p->j->tok[arr].size; k++) {
		int s = json_elem(p->j, arr, k);
		snprintf(path, sizeof path, "linux.seccomp.syscalls[%d]", k);
		if (keys_only(p, s, path, sc_known) < 0)
			return -1;
		snprintf(path, sizeof path, "linux.seccomp.syscalls[%d].names", k);
		if ((f = field(p, s, "names")) < 0 || strings(p, f, path, list, OCI_MAX_SYSCALLS, &n) < 0)
			return f < 0 ? fail(p, "%s is missing", path) : -1;
		for (int m = 0; m < n; m++) {
			size_t len = strlen(list[m]);
			int ok = len >= 1 && len <= 64;
			for (size_t q = 0; ok && q < len; q++)
				ok = (list[m][q] >= 'a' && list[m][q] <= 'z') ||
				     (list[m][q] >= '0' && list[m][q] <= '9') || list[m][q] == '_';
			if (!ok)
				return fail(p, "%s[%d]: '%s' is not a system call name", path, m, list[m]);
		}
		snprintf(path, sizeof path, "linux.seccomp.syscalls[%d].action", k);
		if ((f = field(p, s, "action")) < 0 || !(a = str(p, f, path)))
			return f < 0 ? fail(p, "%s is missing", path) : -1;
		if (!one_of(actions, a))
			return fail(p, "%s: unknown action '%s'", path, a);
		int args = field(p, s, "args");
		if (args >= 0 && !json_is_array(p->j, args))
			return fail(p, "linux.seccomp.syscalls[%d].args must be an array", k);
		for (int m = 0; args >= 0 && m < p->j->tok[args].size; m++) {
			int e = json_elem(p->j, args, m);
			uint64_t idx;
			snprintf(path, sizeof path, "linux.seccomp.syscalls[%d].args[%d]", k, m);
			if (keys_only(p, e, path, arg_known) < 0)
				return -1;
			if ((f = field(p, e, "index")) < 0 || u64(p, f, path, 5, &idx) < 0)
				return fail(p, "%s.index must be an integer from 0 to 5", path);
			if ((f = field(p, e, "op")) < 0 || !(a = str(p, f, path)) || !one_of(ops, a))
				return fail(p, "%s.op: unknown operator", path);
		}
	}
	const jsmntok_t *t = &p->j->tok[o];
	p->c->seccomp_len = (size_t)(t->end - t->start);
	if (!(p->c->seccomp_json = malloc(p->c->seccomp_len + 1)))
		return fail(p, "out of memory");
	memcpy(p->c->seccomp_json, p->j->js + t->start, p->c->seccomp_len);
	p->c->seccomp_json[p->c->seccomp_len] = 0;
	return 0;
}

/* linux.sysctl: an object of strings; which keys a box can have is
 * sysctl.c's (map time). */
static int parse_sysctl(struct p *p, int o)
{
	struct oci_config *c = p->c;
	if (!json_is_object(p->j, o))
		return fail(p, "linux.sysctl must be an object of strings");
	if (p->j->tok[o].size > OCI_MAX_SYSCTL)
		return fail(p, "linux.sysctl has more than %d keys", OCI_MAX_SYSCTL);
	int k = o + 1;
	for (int n = 0; n < p->j->tok[o].size; n++, k = json_skip(p->j, k + 1)) {
		const char *key = str(p, k, "linux.sysctl key");
		if (!key)
			return -1;
		char path[300];
		snprintf(path, sizeof path, "linux.sysctl.%.200s", key);
		if (!(c->sysctl_val[c->nsysctl] = str(p, k + 1, path)))
			return -1;
		c->sysctl_key[c->nsysctl++] = key;
	}
	return 0;
}

static int parse_linux(struct p *p, int o)
{
	static const char *const known[] = {"namespaces", "uidMappings", "gidMappings", "resources",
					    "maskedPaths", "readonlyPaths", "rootfsPropagation", "seccomp",
					    "sysctl", "devices", "mountLabel", "cgroupsPath", NULL};
	struct oci_config *c = p->c;
	int f;
	if (keys_only(p, o, "linux", known) < 0)
		return -1;
	if ((f = field(p, o, "namespaces")) >= 0 && parse_namespaces(p, f) < 0)
		return -1;
	if ((f = field(p, o, "uidMappings")) >= 0 &&
	    parse_idmaps(p, f, "linux.uidMappings", c->uidmap, &c->nuidmap) < 0)
		return -1;
	if ((f = field(p, o, "gidMappings")) >= 0 &&
	    parse_idmaps(p, f, "linux.gidMappings", c->gidmap, &c->ngidmap) < 0)
		return -1;
	if ((f = field(p, o, "sysctl")) >= 0 && parse_sysctl(p, f) < 0)
		return -1;
	if ((f = field(p, o, "cgroupsPath")) >= 0 && !(c->cgroups_path = str(p, f, "linux.cgroupsPath")))
		return -1;
	if (c->cgroups_path && !*c->cgroups_path)
		c->cgroups_path = NULL;
	if (empty_or_absent(p, o, "devices", "linux.devices", "kern's /dev holds only its own nodes") < 0 ||
	    empty_or_absent(p, o, "mountLabel", "linux.mountLabel", "kern does not label with SELinux") < 0)
		return -1;
	if ((f = field(p, o, "resources")) >= 0 && parse_resources(p, f) < 0)
		return -1;
	if ((f = field(p, o, "maskedPaths")) >= 0 &&
	    strings(p, f, "linux.maskedPaths", c->masked, OCI_MAX_PATHS, &c->nmasked) < 0)
		return -1;
	if ((f = field(p, o, "readonlyPaths")) >= 0 &&
	    strings(p, f, "linux.readonlyPaths", c->readonly, OCI_MAX_PATHS, &c->nreadonly) < 0)
		return -1;
	/* kern's root is a private mount tree, as "private" and "rprivate" ask. */
	if ((f = field(p, o, "rootfsPropagation")) >= 0 && !json_streq(p->j, f, "private") &&
	    !json_streq(p->j, f, "rprivate") && !json_streq(p->j, f, ""))
		return fail(p, "linux.rootfsPropagation: only private and rprivate are supported");
	if ((f = field(p, o, "seccomp")) >= 0)
		return check_seccomp(p, f);
	return 0;
}

/* annotations, re-quoted into one JSON object for `state`. */
static int parse_annotations(struct p *p, int o)
{
	size_t cap = 64, used = 0;
	char *out = malloc(cap);
	if (!json_is_object(p->j, o)) {
		free(out);
		return fail(p, "annotations must be an object of strings");
	}
	if (!out)
		return fail(p, "out of memory");
	out[used++] = '{';
	int k = o + 1;
	for (int n = 0; n < p->j->tok[o].size; n++, k = json_skip(p->j, k + 1)) {
		char path[64];
		snprintf(path, sizeof path, "annotations value %d", n);
		const char *key = str(p, k, "annotations key"), *val = key ? str(p, k + 1, path) : NULL;
		if (!val) {
			free(out);
			return -1;
		}
		size_t need = used + 2 * (strlen(key) + strlen(val)) * 6 + 16;
		if (need > MAX_ANNOTATIONS) {
			free(out);
			return fail(p, "annotations are larger than %u bytes", MAX_ANNOTATIONS);
		}
		if (need > cap) {
			char *g = realloc(out, need);
			if (!g) {
				free(out);
				return fail(p, "out of memory");
			}
			out = g;
			cap = need;
		}
		if (n)
			out[used++] = ',';
		int a = json_quote(key, out + used, cap - used);
		used += (size_t)a;
		out[used++] = ':';
		used += (size_t)json_quote(val, out + used, cap - used);
	}
	out[used++] = '}';
	out[used] = 0;
	p->c->annotations = out;
	return 0;
}

int oci_config_parse(const char *js, size_t len, struct oci_config *c, char *why, size_t whylen)
{
	static const char *const known[] = {"ociVersion", "root", "process", "hostname", "domainname",
					    "mounts", "hooks", "annotations", "linux", NULL};
	static const char *const root_known[] = {"path", "readonly", NULL};
	struct json j;
	const char *jwhy;
	struct p p = {.j = &j, .c = c, .why = why, .wl = whylen};
	int f, rc = -1;

	memset(c, 0, sizeof *c);
	if (len > OCI_CONFIG_MAX) {
		snprintf(why, whylen, "config.json is larger than %u bytes", OCI_CONFIG_MAX);
		return -1;
	}
	if (json_parse(&j, js, len, OCI_CONFIG_MAX, MAX_DEPTH, &jwhy) < 0) {
		snprintf(why, whylen, "config.json is not valid JSON: %s", jwhy);
		return -1;
	}
	if (keys_only(&p, 0, "", known) < 0)
		goto out;
	if ((f = field(&p, 0, "ociVersion")) < 0 || !(c->version = str(&p, f, "ociVersion")))
		goto missing_version;
	if (strncmp(c->version, "1.", 2) != 0) {
		fail(&p, "ociVersion '%s' is not 1.x", c->version);
		goto out;
	}
	if ((f = field(&p, 0, "root")) < 0) {
		fail(&p, "root is missing");
		goto out;
	}
	if (keys_only(&p, f, "root", root_known) < 0)
		goto out;
	int g = field(&p, f, "path");
	if (g < 0) {
		fail(&p, "root.path is missing");
		goto out;
	}
	if (!(c->root = str(&p, g, "root.path")))
		goto out;
	if ((g = field(&p, f, "readonly")) >= 0 && boolean(&p, g, "root.readonly", &c->root_ro) < 0)
		goto out;
	if ((f = field(&p, 0, "process")) < 0) {
		fail(&p, "process is missing (kern-oci runs a container's process; create needs one)");
		goto out;
	}
	if (parse_process(&p, f) < 0)
		goto out;
	if ((f = field(&p, 0, "hostname")) >= 0 && !(c->hostname = str(&p, f, "hostname")))
		goto out;
	if (empty_or_absent(&p, 0, "domainname", "domainname", NULL) < 0 ||
	    empty_or_absent(&p, 0, "hooks", "hooks", "kern runs no hooks") < 0)
		goto out;
	if ((f = field(&p, 0, "mounts")) >= 0 && parse_mounts(&p, f) < 0)
		goto out;
	if ((f = field(&p, 0, "linux")) >= 0 && parse_linux(&p, f) < 0)
		goto out;
	if ((f = field(&p, 0, "annotations")) >= 0 ? parse_annotations(&p, f) < 0
						   : !(c->annotations = strdup("{}")))
		goto out;
	rc = 0;
	goto out;
missing_version:
	if (f < 0)
		fail(&p, "ociVersion is missing");
out:
	json_free(&j);
	if (rc < 0)
		oci_config_free(c);
	return rc;
}

int oci_process_parse(const char *js, size_t len, struct oci_config *c, char *why, size_t whylen)
{
	struct json j;
	const char *jwhy;
	struct p p = {.j = &j, .c = c, .why = why, .wl = whylen};
	memset(c, 0, sizeof *c);
	if (len > OCI_CONFIG_MAX) {
		snprintf(why, whylen, "the process file is larger than %u bytes", OCI_CONFIG_MAX);
		return -1;
	}
	if (json_parse(&j, js, len, OCI_CONFIG_MAX, MAX_DEPTH, &jwhy) < 0) {
		snprintf(why, whylen, "the process file is not valid JSON: %s", jwhy);
		return -1;
	}
	int rc = parse_process(&p, 0);
	json_free(&j);
	if (rc < 0)
		oci_config_free(c);
	return rc;
}

void oci_config_free(struct oci_config *c)
{
	strv_free(&c->pool);
	free(c->annotations);
	c->annotations = NULL;
	free(c->seccomp_json);
	c->seccomp_json = NULL;
}
