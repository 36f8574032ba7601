/* kern.toml profiles (box-cli.md §2.3): find the file, check every table
 * against what kern understands, then resolve vcpu:/vdisk:/vgpio: tokens in
 * order. Errors are CLI errors (printed here, returned as -1; the caller
 * exits 1), each naming the file and, for content, the line and column. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/env.h"
#include "base/parse.h"
#include "base/path.h"
#include "base/toml.h"
#include "box/profiles.h"
#include "box/vdisk.h"

/* ^(vcpu|vgpio|vdisk):[A-Za-z0-9][A-Za-z0-9._-]*$, checked by hand: it runs
 * for every bare word of `kern box`, and compiling a regex there cost more
 * than the rest of the command-line parsing. */
int profile_token_valid(const char *tok)
{
	static const char *const kinds[] = {"vcpu:", "vgpio:", "vdisk:"};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strncmp(tok, kinds[i], strlen(kinds[i])) == 0)
			return name_ok(tok + strlen(kinds[i]), SIZE_MAX);
	return 0;
}

/* A [[vcpu]], [[vdisk]] or [[vgpio]] table's name. */
#define PROFILE_NAME_MAX 63

static void copy_str(char *out, size_t len, const char *s)
{
	size_t n = strnlen(s, len - 1);
	memcpy(out, s, n);
	out[n] = 0;
}

/* The kern.toml to read, per box-cli.md §2.3; *explicit when it was named by the
 * caller (then it must exist). */
static int find_config(const char *config_flag, char *out, size_t len, int *explicit_)
{
	const char *v = env_get("KERN_CONFIG");
	*explicit_ = 1;
	if (v || (config_flag && *config_flag)) {
		copy_str(out, len, v ? v : config_flag);
		return 0;
	}
	*explicit_ = 0;
	const char *xdg = env_get("XDG_CONFIG_HOME"), *home = env_get("HOME");
	char cand[2][PATH_MAX];
	int n = 0;
	if (xdg && xdg[0] == '/')
		snprintf(cand[n++], PATH_MAX, "%s/kern/kern.toml", xdg);
	if (home && home[0] == '/')
		snprintf(cand[n++], PATH_MAX, "%s/.config/kern/kern.toml", home);
	for (int i = 0; i < n; i++)
		if (access(cand[i], F_OK) == 0) {
			copy_str(out, len, cand[i]);
			return 0;
		}
	copy_str(out, len, n ? cand[0] : "~/.config/kern/kern.toml");
	return -1;
}

struct ctx {
	const char *path;
	const struct toml_table *t;	/* the table being checked */
};

static int bad_at(const struct ctx *x, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad_at(const struct ctx *x, int line, int col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fatal("box", "%s:%d:%d: %s", x->path, line, col, msg);
	return -1;
}

static int want_string(const struct ctx *x, const struct toml_kv *kv)
{
	if (kv->v.type != TOML_STRING)
		return bad_at(x, kv->v.line, kv->v.col, "'%s' must be a \"string\"", kv->key);
	return 0;
}

/* memory = "512m" | 536870912 */
static int get_size(const struct ctx *x, const struct toml_kv *kv, int allow_t, uint64_t *out)
{
	if (kv->v.type == TOML_INT && kv->v.i > 0) {
		*out = (uint64_t)kv->v.i;
		return 0;
	}
	if (kv->v.type == TOML_STRING && parse_size(kv->v.s, allow_t, out) == 0 && *out > 0)
		return 0;
	return bad_at(x, kv->v.line, kv->v.col,
		      "'%s' must be a size such as \"512m\" or a number of bytes > 0", kv->key);
}

static int check_vcpu(const struct ctx *x, const struct toml_kv *kv)
{
	uint64_t u;
	unsigned long long n;
	if (strcmp(kv->key, "cpus") == 0) {
		if (kv->v.type == TOML_BOOL || kv->v.type == TOML_ARRAY || parse_cpus(kv->v.s, &u) < 0)
			return bad_at(x, kv->v.line, kv->v.col,
				      "'cpus' must be a decimal > 0 such as 0.5 or 2");
		return 0;
	}
	if (strcmp(kv->key, "memory") == 0)
		return get_size(x, kv, 0, &u);
	if (strcmp(kv->key, "pids") == 0) {
		if ((kv->v.type == TOML_INT || kv->v.type == TOML_STRING) && parse_u64(kv->v.s, &n) == 0 &&
		    n >= 1 && n <= 4194304)
			return 0;
		return bad_at(x, kv->v.line, kv->v.col, "'pids' must be an integer >= 1");
	}
	return bad_at(x, kv->line, kv->col, "unknown key '%s' in [[vcpu]] (known: name, cpus, memory, pids)",
		      kv->key);
}

/* Where a vdisk may go: what --tmpfs accepts (box-cli.md §8). */
static int vdisk_path_ok(const char *p)
{
	char c[PATH_MAX];
	if (!path_is_clean_abs(p) || strlen(p) > 200 || strchr(p, ':') ||
	    path_collapse(p, c, sizeof c) < 0 || strcmp(c, "/") == 0)
		return 0;
	return !path_is_under(c, "/proc") && !path_is_under(c, "/sys") && !path_is_under(c, "/dev");
}

/* backend = "disk" in the table being checked. */
static int is_disk(const struct ctx *x)
{
	const struct toml_kv *b = toml_get(x->t, "backend");
	return b && b->v.type == TOML_STRING && strcmp(b->v.s, "disk") == 0;
}

static int check_vdisk(const struct ctx *x, const struct toml_kv *kv)
{
	uint64_t u = 0;
	if (strcmp(kv->key, "size") == 0) {
		if (get_size(x, kv, 1, &u))
			return -1;
		/* mke2fs needs room for its metadata; ext4 keeps files up to 16t. */
		if (is_disk(x) && (u < VDISK_MIN || u > VDISK_MAX))
			return bad_at(x, kv->v.line, kv->v.col,
				      "a vdisk with backend = \"disk\" must have a 'size' from 1m to 16t");
		return 0;
	}
	if (strcmp(kv->key, "path") == 0) {
		if (want_string(x, kv))
			return -1;
		if (!vdisk_path_ok(kv->v.s))
			return bad_at(x, kv->v.line, kv->v.col,
				      "'path' must be an absolute path outside /, /proc, /sys and /dev");
		return 0;
	}
	if (strcmp(kv->key, "backend") == 0) {
		if (want_string(x, kv))
			return -1;
		if (strcmp(kv->v.s, "tmpfs") != 0 && strcmp(kv->v.s, "disk") != 0)
			return bad_at(x, kv->v.line, kv->v.col, "'backend' must be \"tmpfs\" or \"disk\"");
		return 0;
	}
	return bad_at(x, kv->line, kv->col,
		      "unknown key '%s' in [[vdisk]] (known: name, size, path, backend)", kv->key);
}

static int check_vgpio(const struct ctx *x, const struct toml_kv *kv)
{
	if (strcmp(kv->key, "devices") != 0)
		return bad_at(x, kv->line, kv->col, "unknown key '%s' in [[vgpio]] (known: name, devices)",
			      kv->key);
	if (kv->v.type != TOML_ARRAY)
		return bad_at(x, kv->v.line, kv->v.col, "'devices' must be a list of paths [\"/dev/...\"]");
	if (kv->v.nitems > PROFILES_MAX_DEVICES)
		return bad_at(x, kv->v.line, kv->v.col, "more than %d devices", PROFILES_MAX_DEVICES);
	for (int i = 0; i < kv->v.nitems; i++)
		if (!path_is_clean_abs(kv->v.items[i]) || strlen(kv->v.items[i]) >= 256)
			return bad_at(x, kv->v.line, kv->v.col, "device '%s' is not a clean absolute path",
				      kv->v.items[i]);
	return 0;
}

/* Every table, whether a token names it or not: a typo is reported the
 * first time, not the day the profile is used. */
static int check_doc(const struct ctx *x, const struct toml_doc *d)
{
	if (d->t[0].nkv > 0)
		return bad_at(x, d->t[0].kv[0].line, d->t[0].kv[0].col,
			      "key '%s' outside any table ([[vcpu]], [[vdisk]], [[vgpio]])",
			      d->t[0].kv[0].key);
	for (int i = 1; i < d->nt; i++) {
		const struct toml_table *t = &d->t[i];
		int (*check)(const struct ctx *, const struct toml_kv *) = NULL;
		if (strcmp(t->name, "registry") == 0 && !t->array)
			continue; /* mirrors: the pull step's */
		if (strcmp(t->name, "vcpu") == 0)
			check = check_vcpu;
		else if (strcmp(t->name, "vdisk") == 0)
			check = check_vdisk;
		else if (strcmp(t->name, "vgpio") == 0)
			check = check_vgpio;
		if (!check || !t->array)
			return bad_at(x, t->line, t->col, "unknown table %s%s%s (known: [[vcpu]], [[vdisk]], "
				      "[[vgpio]], [registry])", t->array ? "[[" : "[", t->name,
				      t->array ? "]]" : "]");
		const struct toml_kv *name = toml_get(t, "name");
		if (!name)
			return bad_at(x, t->line, t->col, "[[%s]] has no name", t->name);
		if (want_string(x, name))
			return -1;
		if (!name_ok(name->v.s, PROFILE_NAME_MAX))
			return bad_at(x, name->v.line, name->v.col,
				      "name '%s' must match [A-Za-z0-9][A-Za-z0-9._-]* (at most 63 bytes)",
				      name->v.s);
		for (int j = 1; j < i; j++) {
			const struct toml_kv *other = toml_get(&d->t[j], "name");
			if (strcmp(d->t[j].name, t->name) == 0 && other &&
			    other->v.type == TOML_STRING && strcmp(other->v.s, name->v.s) == 0)
				return bad_at(x, name->v.line, name->v.col,
					      "%s:%s is defined twice (first at line %d)", t->name,
					      name->v.s, d->t[j].line);
		}
		struct ctx tx = {x->path, t};
		for (int k = 0; k < t->nkv; k++)
			if (strcmp(t->kv[k].key, "name") != 0 && check(&tx, &t->kv[k]))
				return -1;
	}
	return 0;
}

static const struct toml_table *find_profile(const struct toml_doc *d, const char *kind,
					     const char *name)
{
	for (int i = 1; i < d->nt; i++) {
		const struct toml_kv *n = toml_get(&d->t[i], "name");
		if (strcmp(d->t[i].name, kind) == 0 && n && strcmp(n->v.s, name) == 0)
			return &d->t[i];
	}
	return NULL;
}

static void apply_vcpu(const struct toml_table *t, struct profiles *out)
{
	const struct toml_kv *kv;
	unsigned long long n;
	if ((kv = toml_get(t, "cpus")) && parse_cpus(kv->v.s, &out->cpu_micro) == 0)
		out->cpus_set = 1;
	if ((kv = toml_get(t, "memory"))) {
		if (kv->v.type == TOML_INT)
			out->memory = (uint64_t)kv->v.i;
		else
			(void)parse_size(kv->v.s, 0, &out->memory);
		out->memory_set = 1;
	}
	if ((kv = toml_get(t, "pids")) && parse_u64(kv->v.s, &n) == 0) {
		out->pids = n;
		out->pids_set = 1;
	}
}

static int apply_vdisk(const struct toml_table *t, const char *tok, const char *name,
		       struct profiles *out)
{
	const struct toml_kv *kv;
	struct vdisk d = {0};
	int slot = out->nvdisks;
	copy_str(d.name, sizeof d.name, name);
	if (!(kv = toml_get(t, "size"))) {
		fatal("box", "profile '%s' has no size", tok);
		return -1;
	}
	if (kv->v.type == TOML_INT)
		d.size = (uint64_t)kv->v.i;
	else
		(void)parse_size(kv->v.s, 1, &d.size);
	d.disk = (kv = toml_get(t, "backend")) && strcmp(kv->v.s, "disk") == 0;
	if ((kv = toml_get(t, "path")))
		copy_str(d.path, sizeof d.path, kv->v.s);
	else
		snprintf(d.path, sizeof d.path, "/vdisk/%s", name);
	for (int i = 0; i < out->nvdisks; i++) {
		if (strcmp(out->vdisks[i].name, name) == 0)
			slot = i; /* named again: the later token wins */
		else if (strcmp(out->vdisks[i].path, d.path) == 0) {
			fatal("box", "profiles 'vdisk:%s' and '%s' both mount at %s", out->vdisks[i].name,
			      tok, d.path);
			return -1;
		}
	}
	if (slot >= PROFILES_MAX_VDISKS) {
		fatal("box", "more than %d vdisk profiles", PROFILES_MAX_VDISKS);
		return -1;
	}
	out->vdisks[slot] = d;
	if (slot == out->nvdisks)
		out->nvdisks++;
	return 0;
}

static int apply_vgpio(const struct toml_table *t, const char *tok, struct profiles *out)
{
	const struct toml_kv *kv = toml_get(t, "devices");
	for (int i = 0; kv && i < kv->v.nitems; i++) {
		const char *dev = kv->v.items[i], *why;
		int dup = 0, fd = vgpio_open(dev, &why);
		if (fd < 0) {
			fatal("box", "profile '%s': refusing device '%s': %s", tok, dev, why);
			return -1;
		}
		close(fd);
		for (int j = 0; j < out->ndevices; j++)
			dup |= strcmp(out->devices[j], dev) == 0;
		if (dup)
			continue;
		if (out->ndevices >= PROFILES_MAX_DEVICES) {
			fatal("box", "more than %d vgpio devices", PROFILES_MAX_DEVICES);
			return -1;
		}
		copy_str(out->devices[out->ndevices++], sizeof out->devices[0], dev);
	}
	return 0;
}

int profiles_resolve(char *const *tokens, int ntokens, const char *config_flag,
		     struct profiles *out)
{
	struct toml_doc doc;
	char path[PATH_MAX], err[PATH_MAX + 256];
	int explicit_, rc = 0;

	if (ntokens == 0) {
		/* Empty, its arrays untouched: nothing reads past the counts. */
		out->memory = out->pids = out->cpu_micro = 0;
		out->memory_set = out->pids_set = out->cpus_set = 0;
		out->nvdisks = out->ndevices = 0;
		out->config_path[0] = 0;
		return 0;
	}
	memset(out, 0, sizeof *out);
	for (int i = 0; i < ntokens; i++)
		if (!profile_token_valid(tokens[i])) {
			fatal("box", "bad profile token '%s'", tokens[i]);
			return -1;
		}
	if (find_config(config_flag, path, sizeof path, &explicit_) < 0) {
		fatal("box", "profile '%s' is not defined in %s", tokens[0], path);
		hint("profiles live in kern.toml ($KERN_CONFIG, --config, $XDG_CONFIG_HOME/kern/kern.toml "
		     "or ~/.config/kern/kern.toml); see `man kern-box`");
		return -1;
	}
	copy_str(out->config_path, sizeof out->config_path, path);
	if (toml_load(path, &doc, err, sizeof err) < 0) {
		if (errno == ENOENT || errno == EACCES || errno == ENOTDIR || errno == ELOOP)
			fatal("box", "cannot read kern.toml %s", err);
		else
			fatal("box", "%s", err);
		return -1;
	}
	struct ctx x = {path, NULL};
	if ((rc = check_doc(&x, &doc)))
		goto out;
	for (int i = 0; i < ntokens && !rc; i++) {
		char kind[8];
		const char *colon = strchr(tokens[i], ':'), *name = colon + 1;
		snprintf(kind, sizeof kind, "%.*s", (int)(colon - tokens[i]), tokens[i]);
		const struct toml_table *t = find_profile(&doc, kind, name);
		if (!t) {
			fatal("box", "profile '%s' is not defined in %s", tokens[i], path);
			rc = -1;
		} else if (strcmp(kind, "vcpu") == 0)
			apply_vcpu(t, out);
		else if (strcmp(kind, "vdisk") == 0)
			rc = apply_vdisk(t, tokens[i], name, out);
		else
			rc = apply_vgpio(t, tokens[i], out);
	}
out:
	toml_free(&doc);
	if (rc)
		memset(out, 0, sizeof *out);
	return rc;
}

int profiles_disk_backend(struct profiles *p, int root, int map_host_root, int quiet)
{
	int ndisk = 0;
	for (int i = 0; i < p->nvdisks; i++)
		ndisk += p->vdisks[i].disk;
	if (!ndisk)
		return 0;
	if (root && map_host_root) {
		fatal("box", "--map-host-root cannot be combined with a vdisk with backend = \"disk\" "
		      "(the box's namespaces would hold the supervisor that makes the disk); drop one");
		return -1;
	}
	if (root)
		return 0;
	for (int i = 0; i < p->nvdisks; i++)
		p->vdisks[i].disk = 0;
	if (!quiet)
		note("backend = \"disk\" needs host root (a loop device): %s vdisk%s %s a tmpfs charged to the "
		     "box's memory cap instead", ndisk > 1 ? "these" : "this", ndisk > 1 ? "s" : "",
		     ndisk > 1 ? "are" : "is");
	return 0;
}

void profiles_devices_line(const struct profiles *p, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "devices: ");
	for (int i = 0; i < p->ndevices && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "", p->devices[i]);
}

void profiles_vdisks_line(const struct profiles *p, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "vdisks: ");
	for (int i = 0; i < p->nvdisks && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s=%" PRIu64 "@%s", i ? "," : "",
				      p->vdisks[i].name, p->vdisks[i].size, p->vdisks[i].path);
}
