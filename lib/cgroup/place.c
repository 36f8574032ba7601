/* Placement (isolation.md §7.2): the first parent that applies on this host,
 * and the box directory kern-box-<name>-<supervisor pid> below it (in every
 * v1 hierarchy used). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/env.h"
#include "base/idmap.h"
#include "cgroup/box.h"
#include "cgroup/io.h"

#define SUP_PREFIX "kern-sup-"

int cg_box_name(char *out, size_t len, const char *name, pid_t sup)
{
	int n = snprintf(out, len, "kern-box-%s-%d", name, (int)sup);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

uid_t cg_host_uid(void)
{
	uid_t uid = geteuid();
	struct id_range r[IDMAP_MAX];
	int n = idmap_read("/proc/self/uid_map", r, IDMAP_MAX);
	if (n < 0)
		return uid;
	/* Where our uid falls, on the host. */
	for (int i = 0; i < n; i++)
		if (uid >= r[i].inside && uid - r[i].inside < r[i].count)
			return (uid_t)(r[i].outside + (uid - r[i].inside));
	return (uid_t)-1;
}

int cg_hier_open(struct cg_hier *h)
{
	h->leaf_fd = -1;
	h->fd = open(h->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return h->fd < 0 ? -1 : 0;
}

int cg_path(char *out, const char *fmt, ...)
{
	char buf[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, buf, (size_t)n + 1);
	return 0;
}

static int join(char *out, const char *dir, const char *name)
{
	return cg_path(out, "%s/%s", dir, name);
}

/* A cgroup this user may create children in and move tasks into: a real
 * directory (owned by us unless we are root) with writable cgroup.procs. */
static int usable(const char *dir, uid_t uid)
{
	char procs[PATH_MAX];
	struct stat st;
	if (!dir[0] || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (uid != 0 && st.st_uid != uid)
		return 0;
	if (join(procs, dir, "cgroup.procs") < 0)
		return 0;
	return faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) == 0 &&
	       faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
}

static int procs_writable(const char *dir)
{
	char procs[PATH_MAX];
	return dir[0] && join(procs, dir, "cgroup.procs") == 0 &&
	       faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
}

static void parent_of(char *p)
{
	char *s = strrchr(p, '/');
	if (s && s != p)
		*s = 0;
}

/* mkdir for a shared parent (kern, kern.slice): an existing directory is
 * fine, anything else at that name is not. Looked at first: it exists on
 * every start but the first (a failed mkdir() was one call more). */
static int ensure_dir(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (errno != ENOENT)
			return -1;
		if (mkdir(path, 0755) == 0)
			return 0;
		if (errno != EEXIST || lstat(path, &st) < 0)
			return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* The box directory. One left by a dead process that had our pid is
 * removed first when it is empty. */
static int make_box_dir(struct cg_hier *h, const char *boxname)
{
	if (join(h->dir, h->parent, boxname) < 0)
		return -1;
	if (mkdir(h->dir, 0755) < 0) {
		if (errno != EEXIST || rmdir(h->dir) < 0 || mkdir(h->dir, 0755) < 0)
			return -1;
	}
	if (cg_hier_open(h) < 0) {
		int saved = errno;
		rmdir(h->dir);
		errno = saved;
		return -1;
	}
	return 0;
}

/* v2: controllers of interest listed in dir/file, as CG_BITs. */
static unsigned v2_list(const char *dir, const char *file, int *has_io)
{
	char buf[1024];
	unsigned m = 0;
	int fd;
	if (has_io)
		*has_io = 0;
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if (cg_read(fd, file, buf, sizeof buf) >= 0) {
		for (int c = 0; c < CG_NCTL; c++)
			if (cg_word_in(buf, cg_ctl_name((enum cg_ctl)c)))
				m |= CG_BIT(c);
		if (has_io)
			*has_io = cg_word_in(buf, "io");
	}
	close(fd);
	return m;
}

/* v2: enable want (plus io when available) in dir's subtree_control, one
 * controller per write so one refusal does not block the others. Returns
 * what is enabled afterwards; *added gets what this call turned on. */
static unsigned v2_enable(const char *dir, unsigned want, unsigned *added)
{
	int has_io, fd;
	unsigned avail = v2_list(dir, "cgroup.controllers", &has_io);
	unsigned on = v2_list(dir, "cgroup.subtree_control", NULL);
	if (added)
		*added = 0;
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return on;
	for (int c = 0; c < CG_NCTL; c++) {
		char tok[16];
		if (!(want & avail & CG_BIT(c)) || (on & CG_BIT(c)))
			continue;
		snprintf(tok, sizeof tok, "+%s", cg_ctl_name((enum cg_ctl)c));
		if (cg_write(fd, "cgroup.subtree_control", tok) == 0 && added)
			*added |= CG_BIT(c);
	}
	if (has_io) {
		int io_on;
		(void)v2_list(dir, "cgroup.subtree_control", &io_on);
		if (!io_on)
			(void)cg_write(fd, "cgroup.subtree_control", "+io");
	}
	close(fd);
	return v2_list(dir, "cgroup.subtree_control", NULL);
}

/* v2 moves need write access to cgroup.procs of the closest common
 * ancestor of source and destination. */
static int v2_can_move(const char *from, const char *to)
{
	char common[PATH_MAX];
	size_t i = 0, last = 0;
	while (from[i] && from[i] == to[i]) {
		if (from[i] == '/')
			last = i;
		i++;
	}
	if ((from[i] == 0 || from[i] == '/') && (to[i] == 0 || to[i] == '/'))
		last = i;
	if (last == 0 || last >= sizeof common)
		return 0;
	memcpy(common, from, last);
	common[last] = 0;
	return procs_writable(common);
}

/* A unit cgroup of a systemd manager: it tags them with invocation_id. */
static int systemd_managed(const char *dir)
{
	char v[64];
	return getxattr(dir, "user.invocation_id", v, sizeof v) >= 0 ||
	       getxattr(dir, "trusted.invocation_id", v, sizeof v) >= 0;
}

/* isolation.md §7.2 (placement): reachability of the user manager is a
 * non-blocking connect to $XDG_RUNTIME_DIR/systemd/private. */
static int user_manager_reachable(void)
{
	const char *rt = env_get("XDG_RUNTIME_DIR");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, ok;
	if (!rt || rt[0] != '/' ||
	    (size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "%s/systemd/private", rt) >=
		    sizeof sa.sun_path)
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS ||
	     errno == EAGAIN;
	close(fd);
	return ok;
}

/* Only the caller in its own cgroup? (then it may become a parent). */
static int alone_in(const char *dir)
{
	char buf[64];
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	long n;
	if (fd < 0)
		return 0;
	n = cg_read(fd, "cgroup.procs", buf, sizeof buf);
	close(fd);
	char me[24];
	snprintf(me, sizeof me, "%d", (int)getpid());
	return n > 0 && strcmp(buf, me) == 0;
}

static int move_self(const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r;
	if (fd < 0)
		return -1;
	r = cg_write(fd, "cgroup.procs", "0");
	int saved = errno;
	close(fd);
	errno = saved;
	return r;
}

static unsigned wanted(const struct cg_limits *req)
{
	return CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS) | (req->cpu_micro || req->cpu_shares ? CG_BIT(CG_CPU) : 0) |
	       (req->cpuset ? CG_BIT(CG_CPUSET) : 0);
}

/* An empty hierarchy slot. Its three PATH_MAX strings are emptied, not
 * cleared whole: a cleared 12 KiB is three pages touched on the start path,
 * each a page fault. */
static void hier_reset(struct cg_hier *h)
{
	h->mount[0] = h->parent[0] = h->dir[0] = 0;
	h->ctls = 0;
	h->fd = h->leaf_fd = -1;
}

/* v2 with parent P prepared: one hierarchy holding every controller P's
 * children get. */
static int v2_use(struct cg_box *cg, struct cg_mount *m, const char *parent, const char *boxname,
		  enum cg_place place)
{
	struct cg_hier *h = &cg->h[0];
	hier_reset(h);
	snprintf(h->mount, sizeof h->mount, "%s", m->dir);
	snprintf(h->parent, sizeof h->parent, "%s", parent);
	h->ctls = v2_list(parent, "cgroup.subtree_control", NULL);
	if (make_box_dir(h, boxname) < 0)
		return -1;
	cg->nh = 1;
	cg->place = place;
	return 0;
}

static int place_v2(struct cg_box *cg, struct cg_layout *l, const char *boxname,
		    const struct cg_limits *req)
{
	struct cg_mount *m = &l->mounts[0];
	unsigned want = wanted(req) & cg->present;
	unsigned basic = (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS)) & cg->present;
	char p[PATH_MAX], u[PATH_MAX];
	uid_t uid = cg->uid;
	int reachable;

	/* v2, root: kern.slice at the top, controllers enabled on the way. */
	if (uid == 0 && join(p, m->dir, "kern.slice") == 0 && ensure_dir(p) == 0) {
		v2_enable(m->dir, want, NULL);
		unsigned on = v2_enable(p, want, NULL);
		if ((on & basic) == basic && v2_can_move(m->self, p) &&
		    v2_use(cg, m, p, boxname, CG_PLACE_V2_ROOT) == 0)
			return 0;
	}

	/* v2, rootless: kern.slice in the user manager's delegated subtree. */
	reachable = !req->no_scope && user_manager_reachable();
	if (reachable &&
	    cg_path(u, "%s/user.slice/user-%u.slice/user@%u.service", m->dir, (unsigned)uid,
		    (unsigned)uid) == 0 &&
	    usable(u, uid) && join(p, u, "kern.slice") == 0 && ensure_dir(p) == 0) {
		v2_enable(u, want, NULL);
		unsigned on = v2_enable(p, want, NULL);
		if ((on & basic) && v2_can_move(m->self, p) &&
		    v2_use(cg, m, p, boxname, CG_PLACE_V2_USER) == 0)
			return 0;
	}

	/* Our own cgroup, delegated to us: when we are its only process we
	 * step into kern-sup-<pid> and make it the box's parent. */
	if (usable(m->self, uid) && alone_in(m->self)) {
		char sup[PATH_MAX], supname[32];
		snprintf(supname, sizeof supname, SUP_PREFIX "%d", (int)getpid());
		if (join(sup, m->self, supname) == 0 && ensure_dir(sup) == 0) {
			if (move_self(sup) == 0) {
				unsigned added;
				unsigned on = v2_enable(m->self, want, &added);
				if (on & basic) {
					snprintf(cg->sup, sizeof cg->sup, "%s", sup);
					cg->sup_enabled = added;
					if (v2_use(cg, m, m->self, boxname, CG_PLACE_V2_SELF) == 0)
						return 0;
				}
				(void)move_self(m->self);
			}
			rmdir(sup);
		}
	}

	/* A delegated ancestor that already hands memory or pids down (not a
	 * systemd unit: kern never puts boxes into someone else's slices). */
	snprintf(p, sizeof p, "%s", m->self);
	while (p[0] && strlen(p) > strlen(m->dir)) {
		parent_of(p);
		if (strlen(p) < strlen(m->dir) || !usable(p, uid) || systemd_managed(p))
			break;
		unsigned on = v2_enable(p, want, NULL);
		if ((on & basic) && v2_use(cg, m, p, boxname, CG_PLACE_V2_DELEGATED) == 0)
			return 0;
	}

	cg->why = uid == 0 ? CG_WHY_NOT_WRITABLE :
		  req->no_scope ? CG_WHY_NO_SCOPE :
		  reachable ? CG_WHY_NOT_WRITABLE : CG_WHY_NO_MANAGER;
	return 0;
}

/* v1 cpuset: a new cgroup has no cpus or mems; tasks cannot enter until
 * they are copied from the parent. */
static void cpuset_inherit(const char *dir)
{
	char parent[PATH_MAX], buf[1024];
	int pfd, fd;
	snprintf(parent, sizeof parent, "%s", dir);
	parent_of(parent);
	if ((pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		static const char *const files[] = {"cpuset.mems", "cpuset.cpus"};
		for (int i = 0; i < 2; i++) {
			char cur[8];
			if (cg_read(fd, files[i], cur, sizeof cur) == 0 &&
			    cg_read(pfd, files[i], buf, sizeof buf) > 0)
				(void)cg_write(fd, files[i], buf);
		}
		close(fd);
	}
	close(pfd);
}

static int place_v1(struct cg_box *cg, struct cg_layout *l, const char *boxname,
		    const struct cg_limits *req)
{
	unsigned want = wanted(req) & cg->present;
	uid_t uid = cg->uid;
	int all_owned = 1;

	for (int i = 0; i < l->nmounts; i++) {
		struct cg_mount *m = &l->mounts[i];
		struct cg_hier *h = &cg->h[cg->nh];
		char p[PATH_MAX], userdir[32];
		int owned = 0;
		if (!(m->ctls & want))
			continue;
		hier_reset(h);
		h->fd = -1;
		p[0] = 0;
		snprintf(h->mount, sizeof h->mount, "%s", m->dir);
		h->ctls = m->ctls & want;
		/* As root, <mount>/kern: kern owns it, so a cap that does not
		 * apply there is a fault. It does not apply at all when the
		 * hierarchy is read-only to us (a container): then the
		 * delegated paths below are tried as for anyone. */
		if (uid == 0 && join(p, m->dir, "kern") == 0 && ensure_dir(p) == 0) {
			if (m->ctls & CG_BIT(CG_CPUSET))
				cpuset_inherit(p);
			snprintf(h->parent, sizeof h->parent, "%s", p);
			if (make_box_dir(h, boxname) == 0)
				owned = 1;
		}
		if (!owned) {
			snprintf(userdir, sizeof userdir, "kern/user-%u", (unsigned)uid);
			if (join(p, m->dir, userdir) < 0 || !usable(p, uid))
				snprintf(p, sizeof p, "%s", usable(m->self, uid) ? m->self : "");
			if (!p[0])
				continue;
			snprintf(h->parent, sizeof h->parent, "%s", p);
			if (make_box_dir(h, boxname) < 0)
				continue;
		}
		if (m->ctls & CG_BIT(CG_CPUSET))
			cpuset_inherit(h->dir);
		all_owned &= owned;
		cg->nh++;
	}
	if (cg->nh == 0) {
		cg->why = CG_WHY_NOT_WRITABLE;
		return 0;
	}
	cg->place = all_owned ? CG_PLACE_V1_ROOT : CG_PLACE_V1_DELEGATED;
	return 0;
}

static unsigned host_controllers(struct cg_layout *l)
{
	unsigned m = 0;
	if (l->version == 2)
		return v2_list(l->mounts[0].dir, "cgroup.controllers", NULL);
	for (int i = 0; i < l->nmounts; i++)
		m |= l->mounts[i].ctls;
	return m;
}

/* mkdir every directory of rel below root, as ensure_dir() (v2: the
 * controllers of want enabled in each on the way down; v1 cpuset: cpus
 * and mems copied, without which no task may enter). rel's last
 * component is left to the caller. */
static int make_parents(const char *root, const char *rel, int v2, unsigned want, int cpuset)
{
	char p[PATH_MAX];
	if (cg_path(p, "%s/%s", root, rel) < 0)
		return -1;
	if (v2)
		v2_enable(root, want, NULL);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		if (ensure_dir(p) < 0)
			return -1;
		if (v2)
			v2_enable(p, want, NULL);
		if (cpuset)
			cpuset_inherit(p);
		*s = '/';
	}
	return 0;
}

int cg_place_path(struct cg_box *cg, struct cg_layout *l, const struct cg_limits *req)
{
	unsigned want = wanted(req) & cg->present;
	const char *rel = req->path;
	while (*rel == '/')
		rel++;
	if (cg->uid != 0) {
		setup_failed("cgroup: an explicit cgroup path (%s) needs root", req->path);
		return -1;
	}
	for (int i = 0; i < l->nmounts; i++) {
		struct cg_mount *m = &l->mounts[i];
		struct cg_hier *h = &cg->h[cg->nh];
		if (l->version == 1 && !(m->ctls & want))
			continue;
		hier_reset(h);
		snprintf(h->mount, sizeof h->mount, "%s", m->dir);
		int cpuset = l->version == 1 && (m->ctls & CG_BIT(CG_CPUSET));
		if (make_parents(m->dir, rel, l->version == 2, want, cpuset) < 0 ||
		    cg_path(h->dir, "%s/%s", m->dir, rel) < 0) {
			setup_failed_errno("cgroup: mkdir the parents of %s/%s", m->dir, rel);
			return -1;
		}
		memcpy(h->parent, h->dir, strlen(h->dir) + 1);
		parent_of(h->parent);
		/* An empty directory there is taken over (make_box_dir()); one
		 * with tasks or children is another container's. */
		if (make_box_dir(h, strrchr(h->dir, '/') + 1) < 0) {
			setup_failed_errno("cgroup: mkdir %s", h->dir);
			return -1;
		}
		h->ctls = l->version == 2 ? v2_list(h->parent, "cgroup.subtree_control", NULL) : m->ctls & want;
		if (cpuset)
			cpuset_inherit(h->dir);
		cg->nh++;
	}
	cg->place = l->version == 2 ? CG_PLACE_V2_ROOT : CG_PLACE_V1_ROOT;
	return 0;
}

int cg_find_path(struct cg_box *cg, struct cg_layout *l, const char *path)
{
	const char *rel = path;
	char dir[PATH_MAX];
	while (*rel == '/')
		rel++;
	cg->version = l->version;
	cg->present = l->version ? host_controllers(l) : 0;
	for (int i = 0; i < l->nmounts; i++) {
		struct cg_mount *m = &l->mounts[i];
		struct cg_hier *h = &cg->h[cg->nh];
		struct stat st;
		if (cg_path(dir, "%s/%s", m->dir, rel) < 0 || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		hier_reset(h);
		snprintf(h->mount, sizeof h->mount, "%s", m->dir);
		memcpy(h->dir, dir, strlen(dir) + 1);
		memcpy(h->parent, dir, strlen(dir) + 1);
		parent_of(h->parent);
		if (cg_hier_open(h) < 0)
			continue;
		h->ctls = l->version == 2 ? v2_list(h->parent, "cgroup.subtree_control", NULL) : m->ctls;
		cg->nh++;
	}
	cg->place = l->version == 2 ? CG_PLACE_V2_ROOT : CG_PLACE_V1_ROOT;
	return 0;
}

int cg_place(struct cg_box *cg, struct cg_layout *l, const char *name, pid_t sup,
	     const struct cg_limits *req)
{
	char boxname[128];
	cg->version = l->version;
	cg->present = l->version ? host_controllers(l) : 0;
	if (cg_box_name(boxname, sizeof boxname, name, sup) < 0) {
		setup_failed("box name too long for a cgroup: %s", name);
		return -1;
	}
	if (req->path && !l->version) {
		setup_failed("cgroup: no cgroup hierarchy to make %s in", req->path);
		return -1;
	}
	if (req->path)
		return cg_place_path(cg, l, req);
	if (!(cg->present & (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS)))) {
		cg->why = CG_WHY_NO_CONTROLLER;
		/* v2 as root still gives the box a cgroup of its own: no caps,
		 * but cgroup.kill and a view of nothing above it. */
		if (l->version == 2 && cg->uid == 0 && place_v2(cg, l, boxname, req) == 0 &&
		    cg->place == CG_PLACE_V2_ROOT)
			return 0;
		cg->nh = 0;
		cg->place = CG_PLACE_NONE;
		cg->why = CG_WHY_NO_CONTROLLER;
		return 0;
	}
	return l->version == 2 ? place_v2(cg, l, boxname, req) : place_v1(cg, l, boxname, req);
}

/* cg_open(): the same candidates, looking only. */
static int find_in(struct cg_hier *h, const char *mount, const char *parent, const char *boxname)
{
	struct stat st;
	char dir[PATH_MAX];
	if (!parent[0] || join(dir, parent, boxname) < 0 || lstat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return 0;
	hier_reset(h);
	snprintf(h->mount, sizeof h->mount, "%s", mount);
	snprintf(h->parent, sizeof h->parent, "%s", parent);
	snprintf(h->dir, sizeof h->dir, "%s", dir);
	return cg_hier_open(h) == 0;
}

int cg_find(struct cg_box *cg, struct cg_layout *l, const char *name, pid_t sup)
{
	char boxname[128], p[PATH_MAX], supname[32];
	uid_t uid = cg_host_uid();
	cg->version = l->version;
	cg->present = l->version ? host_controllers(l) : 0;
	if (cg_box_name(boxname, sizeof boxname, name, sup) < 0)
		return -1;
	snprintf(supname, sizeof supname, SUP_PREFIX "%d", (int)sup);
	if (l->version == 2) {
		struct cg_mount *m = &l->mounts[0];
		struct cg_hier *h = &cg->h[0];
		const char *base = strrchr(m->self, '/');
		char u[PATH_MAX];
		/* Our own cgroup made parent, with us in kern-sup-<pid>. */
		if (base && strcmp(base + 1, supname) == 0) {
			snprintf(p, sizeof p, "%s", m->self);
			parent_of(p);
			if (find_in(h, m->dir, p, boxname)) {
				snprintf(cg->sup, sizeof cg->sup, "%s", m->self);
				cg->place = CG_PLACE_V2_SELF;
				goto found_v2;
			}
		}
		if (join(p, m->dir, "kern.slice") == 0 && find_in(h, m->dir, p, boxname)) {
			cg->place = CG_PLACE_V2_ROOT;
			goto found_v2;
		}
		if (cg_path(u, "%s/user.slice/user-%u.slice/user@%u.service/kern.slice", m->dir,
			    (unsigned)uid, (unsigned)uid) == 0 &&
		    find_in(h, m->dir, u, boxname)) {
			cg->place = CG_PLACE_V2_USER;
			goto found_v2;
		}
		snprintf(p, sizeof p, "%s", m->self);
		while (p[0] && strlen(p) > strlen(m->dir)) {
			parent_of(p);
			if (find_in(h, m->dir, p, boxname)) {
				cg->place = CG_PLACE_V2_DELEGATED;
				goto found_v2;
			}
		}
		return 0;
found_v2:
		h->ctls = v2_list(h->parent, "cgroup.subtree_control", NULL);
		cg->nh = 1;
		return 0;
	}
	for (int i = 0; i < l->nmounts; i++) {
		struct cg_mount *m = &l->mounts[i];
		struct cg_hier *h = &cg->h[cg->nh];
		char userdir[32];
		snprintf(userdir, sizeof userdir, "kern/user-%u", (unsigned)uid);
		int root = join(p, m->dir, "kern") == 0 && find_in(h, m->dir, p, boxname);
		if (!root && !(join(p, m->dir, userdir) == 0 && find_in(h, m->dir, p, boxname)) &&
		    !find_in(h, m->dir, m->self, boxname))
			continue;
		h->ctls = m->ctls;
		cg->place = root && (cg->nh == 0 || cg->place == CG_PLACE_V1_ROOT) ? CG_PLACE_V1_ROOT
										  : CG_PLACE_V1_DELEGATED;
		cg->nh++;
	}
	return 0;
}
