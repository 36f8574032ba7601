/* Cgroup layout detection (isolation.md §7.1): /sys/fs/cgroup of type
 * cgroup2 means v2 for every controller; otherwise each v1 `cgroup` mount
 * whose super options name memory, pids, cpu or cpuset serves it. The
 * empty cgroup2 of hybrid hosts at /sys/fs/cgroup/unified is ignored. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "cgroup/layout.h"

static const char *const ctl_names[CG_NCTL] = {"memory", "pids", "cpu", "cpuset"};

const char *cg_ctl_name(enum cg_ctl c)
{
	return (unsigned)c < CG_NCTL ? ctl_names[c] : "?";
}

/* Decode mountinfo's octal escapes (\040 for a space) in place. Returns -1
 * on a malformed escape. */
static int unescape(char *s)
{
	char *o = s;
	for (char *i = s; *i; i++) {
		if (*i != '\\') {
			*o++ = *i;
			continue;
		}
		if (i[1] < '0' || i[1] > '3' || i[2] < '0' || i[2] > '7' || i[3] < '0' || i[3] > '7')
			return -1;
		char c = (char)((i[1] - '0') * 64 + (i[2] - '0') * 8 + (i[3] - '0'));
		if (c == 0)
			return -1;
		*o++ = c;
		i += 3;
	}
	*o = 0;
	return 0;
}

/* Controllers of interest named in a comma-separated list. */
static unsigned ctls_in(const char *list)
{
	unsigned m = 0;
	const char *p = list;
	while (*p) {
		const char *e = strchrnul(p, ',');
		size_t n = (size_t)(e - p);
		for (int c = 0; c < CG_NCTL; c++)
			if (strlen(ctl_names[c]) == n && strncmp(p, ctl_names[c], n) == 0)
				m |= CG_BIT(c);
		p = *e ? e + 1 : e;
	}
	return m;
}

/* Split one mountinfo line into the fields we need. Returns 0 or -1. */
static int split_line(char *line, dev_t *dev, char **root, char **mnt, char **fstype,
		      char **superopts)
{
	char *f[6];
	char *save = NULL, *tok;
	int n = 0;
	for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
		f[n++] = tok;
	if (n < 6)
		return -1;
	/* f: id parent maj:min root mountpoint options; then optional fields
	 * up to a lone "-", then fstype, source, super options. */
	while (tok && strcmp(tok, "-") != 0)
		tok = strtok_r(NULL, " ", &save);
	if (!tok)
		return -1;
	*fstype = strtok_r(NULL, " ", &save);
	if (!*fstype || !strtok_r(NULL, " ", &save))
		return -1;
	*superopts = strtok_r(NULL, " ", &save);
	if (!*superopts)
		return -1;
	char *colon, *end;
	unsigned long maj = strtoul(f[2], &colon, 10), min;
	if (colon == f[2] || *colon != ':')
		return -1;
	min = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || *end)
		return -1;
	*dev = makedev(maj, min);
	*root = f[3];
	*mnt = f[4];
	if (unescape(*root) < 0 || unescape(*mnt) < 0)
		return -1;
	return (*root)[0] == '/' && (*mnt)[0] == '/' ? 0 : -1;
}

/* A cg_mount is three PATH_MAX buffers: they are set and copied as
 * strings, never cleared or copied whole (every page touched on the start
 * path is a page fault). */
static void set_mount(struct cg_mount *m, const char *dir, const char *root, unsigned ctls, dev_t dev)
{
	m->self[0] = 0;
	m->dev = dev;
	snprintf(m->dir, sizeof m->dir, "%s", dir);
	snprintf(m->root, sizeof m->root, "%s", root);
	m->ctls = ctls;
}

static void mount_copy(struct cg_mount *dst, const struct cg_mount *src)
{
	memcpy(dst->dir, src->dir, strlen(src->dir) + 1);
	memcpy(dst->root, src->root, strlen(src->root) + 1);
	memcpy(dst->self, src->self, strlen(src->self) + 1);
	dst->ctls = src->ctls;
	dst->dev = src->dev;
}

struct detect {
	struct cg_mount *v1;
	int nv1, top_is_v2;
	char v2root[PATH_MAX];
	dev_t v2dev;
};

static void detect_line(char *line, void *ctx)
{
	struct detect *d = ctx;
	struct cg_mount *v1 = d->v1;
	char *root, *mnt, *fstype, *superopts;
	dev_t dev;
	if (split_line(line, &dev, &root, &mnt, &fstype, &superopts) < 0)
		return;
	if (strcmp(mnt, "/sys/fs/cgroup") == 0) {
		/* A later mount on the same point hides the earlier one. */
		d->top_is_v2 = strcmp(fstype, "cgroup2") == 0;
		if (d->top_is_v2) {
			snprintf(d->v2root, sizeof d->v2root, "%s", root);
			d->v2dev = dev;
		}
		return;
	}
	if (strcmp(fstype, "cgroup") != 0)
		return;
	unsigned ctls = ctls_in(superopts);
	if (!ctls)
		return;
	int i;
	for (i = 0; i < d->nv1; i++)
		if (v1[i].ctls & ctls)
			break;
	if (i < d->nv1) {
		/* A second mount of a hierarchy already seen: prefer one
		 * that shows the whole hierarchy. */
		if (strcmp(v1[i].root, "/") != 0 && strcmp(root, "/") == 0)
			set_mount(&v1[i], mnt, root, ctls, dev);
		return;
	}
	if (d->nv1 < CG_NCTL)
		set_mount(&v1[d->nv1++], mnt, root, ctls, dev);
}

int cg_detect_from(const char *mountinfo_path, struct cg_layout *out)
{
	/* v1 hierarchies are collected in place; a cgroup2 on top replaces them.
	 * Only the array's address is taken here (cppcheck reads it as a use
	 * of the caller's uninitialized layout). */
	// cppcheck-suppress ctuuninitvar
	struct detect d = {.v1 = out->mounts, .v2root = "/"};

	out->version = 0;
	out->nmounts = 0;
	if (each_line(mountinfo_path, detect_line, &d, 100000) < 0)
		return -1;
	if (d.top_is_v2) {
		out->version = 2;
		set_mount(&out->mounts[0], "/sys/fs/cgroup", d.v2root, CG_ALL, d.v2dev);
		out->nmounts = 1;
	} else if (d.nv1 > 0) {
		out->version = 1;
		out->nmounts = d.nv1;
	}
	return 0;
}

/* dir + the part of path below root, or "" when path is not below root. */
static void self_dir(struct cg_mount *m, const char *path)
{
	size_t rn = strlen(m->root);
	const char *rest;
	m->self[0] = 0;
	if (path[0] != '/')
		return;
	if (strcmp(m->root, "/") == 0)
		rest = path;
	else if (strncmp(path, m->root, rn) == 0 && (path[rn] == 0 || path[rn] == '/'))
		rest = path + rn;
	else
		return;
	if (strcmp(rest, "/") == 0)
		rest = "";
	char buf[PATH_MAX];
	int n = snprintf(buf, sizeof buf, "%s%s", m->dir, rest);
	if (n >= 0 && (size_t)n < sizeof buf)
		memcpy(m->self, buf, (size_t)n + 1);
}

static void self_line(char *line, void *ctx)
{
	struct cg_layout *l = ctx;
	char *c1 = strchr(line, ':');
	char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2)
		return;
	*c1 = 0;
	*c2 = 0;
	const char *ctls = c1 + 1, *path = c2 + 1;
	int v2line = strcmp(line, "0") == 0 && *ctls == 0;
	for (int i = 0; i < l->nmounts; i++) {
		struct cg_mount *m = &l->mounts[i];
		if (l->version == 2 ? v2line : (!v2line && (ctls_in(ctls) & m->ctls)))
			self_dir(m, path);
	}
}

int cg_self_from(const char *proc_cgroup_path, struct cg_layout *l)
{
	return each_line(proc_cgroup_path, self_line, l, 999);
}

int cg_detect(struct cg_layout *out)
{
	int kept = 0;
	if (cg_detect_from("/proc/self/mountinfo", out) < 0)
		return -1;
	for (int i = 0; i < out->nmounts; i++) {
		struct stat st;
		if (stat(out->mounts[i].dir, &st) == 0 && st.st_dev == out->mounts[i].dev) {
			if (kept != i)
				mount_copy(&out->mounts[kept], &out->mounts[i]);
			kept++;
		}
	}
	out->nmounts = kept;
	if (!kept)
		out->version = 0;
	if (out->version && cg_self_from("/proc/self/cgroup", out) < 0)
		return -1;
	return 0;
}

struct cg_mount *cg_mount_of(struct cg_layout *l, enum cg_ctl c)
{
	for (int i = 0; i < l->nmounts; i++)
		if (l->mounts[i].ctls & CG_BIT(c))
			return &l->mounts[i];
	return NULL;
}
