/* unpack_commit (isolation.md §12.1 steps 6-7): merge a vetted staging
 * directory into the flat rootfs. Whiteouts and opaque directories first
 * (they only ever hide what earlier layers left), then the tree: a
 * directory that is new moves over whole, one that exists is merged entry
 * by entry; nothing is ever written through a symlink. A rootless pull
 * owns every file but may meet directories it cannot enter: it grants
 * itself u+rwx on them and puts the exact mode back afterwards. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/tree.h"
#include "layer/dirmap.h"
#include "layer/member_path.h"
#include "layer/staging.h"
#include "layer/unpack.h"

struct commit {
	int root, stg;
	struct dirmap *implicit;	/* staging directories no member asked for */
	struct dirmap *whiteout;	/* paths a whiteout deletes */
	struct dirmap *opaque;		/* directories an opaque marker empties */
	char *rec;			/* the records, as read */
	size_t rec_len;
	char *why;
	size_t whylen;
};

static int fail(struct commit *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct commit *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

static int gone(const struct commit *c, const char *path);

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);
	if (!p)
		return NULL;
	snprintf(p, a + b + 2, "%s%s%s", dir, a ? "/" : "", name);
	return p;
}

/* A directory we granted ourselves access to, to restore afterwards. */
struct grant {
	char *path;
	mode_t mode;
	struct timespec mtime;
};

struct grants {
	int base;		/* the tree the paths are in */
	struct grant *v;
	size_t n, cap;
};

static void grants_restore(struct grants *g)
{
	while (g->n) {
		struct grant *x = &g->v[--g->n];
		int fd = tree_open(g->base, x->path, O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			struct timespec ts[2] = {{0, UTIME_OMIT}, x->mtime};
			futimens(fd, ts);
			fchmod(fd, x->mode);
			close(fd);
		}
		free(x->path);
	}
	free(g->v);
	g->v = NULL;
	g->cap = 0;
}

/* Open a directory below g->base for changing its entries, granting the
 * owner search on every parent and rwx on it where they are missing.
 * -1 with errno: ELOOP when a component is a symlink, ENOTDIR when it is
 * another non-directory, ENOENT. */
static int open_dir_granted(const char *path, struct grants *g)
{
	int fd = tree_open(g->base, path, O_RDONLY | O_DIRECTORY);
	struct stat sb;
	if (fd >= 0 && fstat(fd, &sb) == 0 && (sb.st_mode & 0700) == 0700)
		return fd;
	if (fd >= 0)
		close(fd);
	else if (errno == ENOENT)
		return -1;
	/* Walk it, granting as we go; the walk also tells a symlink (ELOOP)
	 * from a file (ENOTDIR), which O_DIRECTORY|O_NOFOLLOW does not. */
	char *copy = strdup(path);
	if (!copy)
		return -1;
	size_t n = strlen(copy);
	int cur = openat(g->base, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; cur >= 0 && i <= n; i++) {
		if (copy[i] != '/' && copy[i] != 0)
			continue;
		char save = copy[i];
		copy[i] = 0;
		const char *slash = strrchr(copy, '/');
		const char *comp = slash ? slash + 1 : copy;
		int last = save == 0;
		if (!*comp) {
			copy[i] = save;
			continue;
		}
		if (fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = errno;
			close(cur);
			cur = -1;
			errno = e;
			break;
		}
		if (!S_ISDIR(sb.st_mode)) {
			close(cur);
			cur = -1;
			errno = S_ISLNK(sb.st_mode) ? ELOOP : ENOTDIR;
			break;
		}
		mode_t need = last ? 0700 : 0100;
		if ((sb.st_mode & need) != need) {
			if (g->n == g->cap) {
				size_t cap = g->cap ? g->cap * 2 : 8;
				struct grant *v = realloc(g->v, cap * sizeof *v);
				if (!v) {
					close(cur);
					cur = -1;
					errno = ENOMEM;
					break;
				}
				g->v = v;
				g->cap = cap;
			}
			g->v[g->n].path = strdup(copy);
			g->v[g->n].mode = sb.st_mode & 07777;
			g->v[g->n].mtime = sb.st_mtim;
			if (!g->v[g->n].path || tree_chmod(cur, comp, (sb.st_mode & 07777) | need) < 0) {
				int e = g->v[g->n].path ? errno : ENOMEM;
				free(g->v[g->n].path);
				close(cur);
				cur = -1;
				errno = e;
				break;
			}
			g->n++;
		}
		int next = openat(cur, comp, (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(cur);
		cur = next;
		errno = e;
		copy[i] = save;
	}
	free(copy);
	return cur;
}

static int keep_reserved(const char *name)
{
	return member_name_reserved(name, strlen(name));
}

/* .wh..wh..opq: empty the rootfs directory except .kern-* names. */
static int apply_opaque(struct commit *c, const char *dir)
{
	struct grants g = {.base = c->root};
	int fd = open_dir_granted(dir, &g), rc = 0;
	if (fd < 0) {
		int e = errno;
		grants_restore(&g);
		if (e == ENOENT || e == ENOTDIR || (e == ELOOP && gone(c, dir)))
			return 0;	/* nothing below to hide */
		if (e == ELOOP)
			return fail(c, "layer writes through a symlink: opaque directory '%.300s'", dir);
		return fail(c, "open '%.300s' for an opaque whiteout: %s", dir, strerror(e));
	}
	if (tree_rm_children(fd, keep_reserved) < 0)
		rc = fail(c, "clear opaque directory '%.300s': %s", dir, strerror(errno));
	close(fd);
	grants_restore(&g);
	return rc;
}

/* .wh.<name>: delete <name> from the rootfs, no-follow. */
static int apply_whiteout(struct commit *c, const char *path)
{
	char *dir = strdup(path);
	if (!dir)
		return fail(c, "out of memory");
	char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : path;
	if (slash)
		*slash = 0;
	else
		dir[0] = 0;
	struct grants g = {.base = c->root};
	int fd = open_dir_granted(dir, &g), rc = 0;
	if (fd < 0) {
		int e = errno;
		grants_restore(&g);
		int nothing = e == ENOENT || e == ENOTDIR || (e == ELOOP && gone(c, dir));
		free(dir);
		if (nothing)
			return 0;
		if (e == ELOOP)
			return fail(c, "layer writes through a symlink: whiteout '%.300s'", path);
		return fail(c, "open the directory of whiteout '%.300s': %s", path, strerror(e));
	}
	if (tree_rm_at(fd, name) < 0)
		rc = fail(c, "apply whiteout '%.300s': %s", path, strerror(errno));
	close(fd);
	grants_restore(&g);
	free(dir);
	return rc;
}

/* Rename a staging entry into the rootfs. A directory being moved to a
 * new parent needs write permission on itself (its '..' changes). */
static int move_entry(struct commit *c, int sfd, int rfd, const char *name, const struct stat *sb,
		      const char *path)
{
	int granted = 0;
	if (S_ISDIR(sb->st_mode) && (sb->st_mode & 0200) == 0) {
		if (tree_chmod(sfd, name, (sb->st_mode & 07777) | 0200) < 0)
			return fail(c, "chmod '%.300s' in staging: %s", path, strerror(errno));
		granted = 1;
	}
	if (renameat(sfd, name, rfd, name) < 0)
		return -2;	/* the caller copies on EXDEV */
	if (S_ISDIR(sb->st_mode)) {
		struct timespec ts[2] = {{0, UTIME_OMIT}, sb->st_mtim};
		if (granted && tree_chmod(rfd, name, sb->st_mode & 07777) < 0)
			return fail(c, "chmod '%.300s': %s", path, strerror(errno));
		utimensat(rfd, name, ts, AT_SYMLINK_NOFOLLOW);
	}
	return 0;
}

/* The fallback when staging and rootfs are not one filesystem for rename
 * (a mount in between): copy a file or symlink. */
static int copy_entry(struct commit *c, int sfd, int rfd, const char *name, const struct stat *sb,
		      const char *path)
{
	struct timespec ts[2] = {sb->st_mtim, sb->st_mtim};
	if (S_ISLNK(sb->st_mode)) {
		char target[MEMBER_PATH_MAX + 2];
		ssize_t n = readlinkat(sfd, name, target, sizeof target - 1);
		if (n < 0)
			return fail(c, "readlink '%.300s' in staging: %s", path, strerror(errno));
		target[n] = 0;
		if (symlinkat(target, rfd, name) < 0)
			return fail(c, "symlink '%.300s': %s", path, strerror(errno));
		utimensat(rfd, name, ts, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	if (!S_ISREG(sb->st_mode))
		return fail(c, "cannot copy '%.300s'", path);
	if ((sb->st_mode & 0400) == 0 && tree_chmod(sfd, name, 0600) < 0)
		return fail(c, "chmod '%.300s' in staging: %s", path, strerror(errno));
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = openat(rfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = 0;
	if (in < 0 || out < 0) {
		rc = fail(c, "copy '%.300s': %s", path, strerror(errno));
	} else {
		char buf[65536];
		ssize_t n;
		while ((n = read(in, buf, sizeof buf)) > 0) {
			for (ssize_t o = 0; o < n;) {
				ssize_t w = write(out, buf + o, (size_t)(n - o));
				if (w < 0) {
					n = -1;
					break;
				}
				o += w;
			}
			if (n < 0)
				break;
		}
		if (n < 0 || fchmod(out, sb->st_mode & 07777) < 0 || futimens(out, ts) < 0)
			rc = fail(c, "copy '%.300s': %s", path, strerror(errno));
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* One directory level of the merge, still to visit (phase 0) or to
 * finish (phase 1: set the directory's mode and mtime). */
struct frame {
	char *rel;
	int phase;
	int take_staging;	/* a member asked for this directory: copy its mode */
	struct stat stg;	/* the staging directory's mode and mtime */
	struct stat old;	/* the rootfs directory before we granted ourselves in */
};

struct frames {
	struct frame *v;
	size_t n, cap;
};

static int frame_push(struct frames *f, char *rel, int take, const struct stat *stg,
		      const struct stat *old)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct frame *v = realloc(f->v, cap * sizeof *v);
		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	struct frame *x = &f->v[f->n++];
	memset(x, 0, sizeof *x);
	x->rel = rel;
	x->take_staging = take;
	if (stg)
		x->stg = *stg;
	if (old)
		x->old = *old;
	return 0;
}

struct names {
	char **v;
	size_t n, cap;
};

static int list_names(int fd, int top, struct names *out)
{
	int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -1;
	}
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (top && member_name_reserved(e->d_name, strlen(e->d_name)))
			continue;	/* the records file and other staging leftovers */
		if (out->n == out->cap) {
			size_t cap = out->cap ? out->cap * 2 : 32;
			char **v = realloc(out->v, cap * sizeof *v);
			if (!v)
				break;
			out->v = v;
			out->cap = cap;
		}
		if (!(out->v[out->n] = strdup(e->d_name)))
			break;
		out->n++;
	}
	int saved = errno;
	closedir(d);
	errno = saved;
	return e ? -1 : 0;
}

static void names_free(struct names *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
	memset(n, 0, sizeof *n);
}

/* Merge one entry of a staging directory into the rootfs directory. */
static int merge_entry(struct commit *c, int sfd, int rfd, const char *rel, const char *name,
		       struct frames *todo)
{
	struct stat s, r;
	char *path = join(rel, name);
	int rc = 0;
	if (!path)
		return fail(c, "out of memory");
	if (fstatat(sfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = fail(c, "stat '%.300s' in staging: %s", path, strerror(errno));
		goto out;
	}
	int exists = fstatat(rfd, name, &r, AT_SYMLINK_NOFOLLOW) == 0;
	if (!exists && errno != ENOENT) {
		rc = fail(c, "stat '%.300s': %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(s.st_mode)) {
		const struct dir_info *imp = dirmap_get(c->implicit, path);
		if (exists && S_ISDIR(r.st_mode)) {
			/* Both have it: merge inside, with access granted on both sides. */
			if (((s.st_mode & 0700) != 0700 && tree_chmod(sfd, name, (s.st_mode & 07777) | 0700) < 0) ||
			    ((r.st_mode & 0700) != 0700 && tree_chmod(rfd, name, (r.st_mode & 07777) | 0700) < 0)) {
				rc = fail(c, "chmod '%.300s': %s", path, strerror(errno));
				goto out;
			}
			if (frame_push(todo, path, !imp, &s, &r) < 0) {
				rc = fail(c, "out of memory");
				goto out;
			}
			return 0;
		}
		if (exists) {
			/* A directory only implied by deeper members never replaces
			 * what an earlier layer put there. */
			if (imp && S_ISLNK(r.st_mode)) {
				rc = fail(c, "layer writes through a symlink: '%.300s' is a symlink in an earlier layer",
					  path);
				goto out;
			}
			if (imp) {
				rc = fail(c, "layer writes under '%.300s', which an earlier layer made a non-directory",
					  path);
				goto out;
			}
			if (unlinkat(rfd, name, 0) < 0) {
				rc = fail(c, "replace '%.300s': %s", path, strerror(errno));
				goto out;
			}
		}
		int m = move_entry(c, sfd, rfd, name, &s, path);
		if (m == -2 && errno == EXDEV) {
			/* Not one filesystem: make the directory and merge into it. */
			if (((s.st_mode & 0700) != 0700 && tree_chmod(sfd, name, (s.st_mode & 07777) | 0700) < 0) ||
			    mkdirat(rfd, name, 0700) < 0 || frame_push(todo, path, 1, &s, NULL) < 0) {
				rc = fail(c, "mkdir '%.300s': %s", path, strerror(errno));
				goto out;
			}
			todo->v[todo->n - 1].old.st_mode = 0;
			return 0;
		}
		if (m == -2)
			rc = fail(c, "move '%.300s' into the rootfs: %s", path, strerror(errno));
		else
			rc = m;
		goto out;
	}
	/* A file or symlink replaces whatever is there, never following it. */
	if (exists && S_ISDIR(r.st_mode) && tree_rm_at(rfd, name) < 0) {
		rc = fail(c, "replace directory '%.300s': %s", path, strerror(errno));
		goto out;
	}
	int m = move_entry(c, sfd, rfd, name, &s, path);
	if (m == -2 && errno == EXDEV) {
		if (exists && !S_ISDIR(r.st_mode) && unlinkat(rfd, name, 0) < 0)
			rc = fail(c, "replace '%.300s': %s", path, strerror(errno));
		else
			rc = copy_entry(c, sfd, rfd, name, &s, path);
	} else if (m == -2) {
		rc = fail(c, "move '%.300s' into the rootfs: %s", path, strerror(errno));
	} else {
		rc = m;
	}
out:
	free(path);
	return rc;
}

static int merge_tree(struct commit *c)
{
	struct frames todo = {0};
	int rc = 0;
	char *top = strdup("");
	if (!top || frame_push(&todo, top, 0, NULL, NULL) < 0) {
		free(top);
		return fail(c, "out of memory");
	}
	while (todo.n && rc == 0) {
		size_t i = todo.n - 1;
		if (todo.v[i].phase == 0) {
			todo.v[i].phase = 1;
			char *rel = todo.v[i].rel;
			int sfd = tree_open(c->stg, rel, O_RDONLY | O_DIRECTORY);
			int rfd = tree_open(c->root, rel, O_PATH | O_DIRECTORY);
			struct names names = {0};
			if (sfd < 0 || rfd < 0) {
				rc = fail(c, "open '%.300s' to merge: %s", *rel ? rel : ".", strerror(errno));
			} else if (list_names(sfd, !*rel, &names) < 0) {
				rc = fail(c, "list '%.300s' in staging: %s", *rel ? rel : ".", strerror(errno));
			}
			for (size_t k = 0; rc == 0 && k < names.n; k++)
				rc = merge_entry(c, sfd, rfd, rel, names.v[k], &todo);
			names_free(&names);
			if (sfd >= 0)
				close(sfd);
			if (rfd >= 0)
				close(rfd);
			continue;	/* children pushed above run first */
		}
		struct frame f = todo.v[i];
		todo.n--;
		if (*f.rel) {
			/* The exact mode: the member's (keeps 1777 on /tmp) or, for a
			 * directory only implied, the one it had before. */
			int fd = tree_open(c->root, f.rel, O_RDONLY | O_DIRECTORY);
			const struct stat *want = f.take_staging ? &f.stg : &f.old;
			if (fd < 0) {
				rc = fail(c, "open '%.300s': %s", f.rel, strerror(errno));
			} else {
				struct timespec ts[2] = {{0, UTIME_OMIT}, want->st_mtim};
				if (futimens(fd, ts) < 0 || fchmod(fd, want->st_mode & 07777) < 0)
					rc = fail(c, "set mode of '%.300s': %s", f.rel, strerror(errno));
				close(fd);
			}
		}
		free(f.rel);
	}
	for (size_t i = 0; i < todo.n; i++)
		free(todo.v[i].rel);
	free(todo.v);
	return rc;
}

/* Read .kern-layer into c->rec and the three sets. */
static int read_records(struct commit *c)
{
	int fd = openat(c->stg, STAGING_RECORDS, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return fail(c, "the layer is not completely staged (%s: %s)", STAGING_RECORDS, strerror(e));
	}
	char *buf = malloc((size_t)sb.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf || got != (size_t)sb.st_size) {
		free(buf);
		return fail(c, "read the layer records: %s", buf ? "short read" : "out of memory");
	}
	buf[got] = 0;
	c->rec = buf;
	c->rec_len = got;
	for (size_t i = 0; i < got;) {
		char tag = buf[i];
		const char *path = buf + i + 1;
		size_t n = strnlen(path, got - i - 1);
		if (i + 1 + n >= got || (tag != 'O' && tag != 'W' && tag != 'I'))
			return fail(c, "corrupt layer records in staging");
		struct dirmap *set = tag == 'O' ? c->opaque : tag == 'W' ? c->whiteout : c->implicit;
		if (!dirmap_put(set, path))
			return fail(c, "out of memory");
		i += n + 2;
	}
	return 0;
}

/* Will path be gone from the rootfs once the whiteouts are applied? */
static int gone(const struct commit *c, const char *path)
{
	char *p = strdup(path);
	int out = 0;
	if (!p)
		return 0;
	size_t n = strlen(p);
	for (size_t i = 0; i <= n && !out; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		char save = p[i];
		p[i] = 0;
		if (dirmap_get(c->whiteout, p))
			out = 1;
		p[i] = save;
	}
	/* Under an opaque directory: gone unless a .kern- name right below. */
	for (size_t i = 0; i <= n && !out; i++) {
		if (i != 0 && p[i] != '/')
			continue;
		char save = p[i];
		p[i] = 0;
		int opq = dirmap_get(c->opaque, p) != NULL;
		p[i] = save;
		if (!opq || (i == 0 && !*p) || i >= n)
			continue;
		const char *child = i ? p + i + 1 : p;
		if (!member_name_reserved(child, strcspn(child, "/")))
			out = 1;
	}
	free(p);
	return out;
}

/* Would a whiteout or opaque marker on dir (in the rootfs) go through a
 * symlink? Walks without changing anything. */
static int check_reachable(struct commit *c, const char *dir, const char *what, const char *path)
{
	char *p = strdup(dir);
	int rc = 0;
	if (!p)
		return fail(c, "out of memory");
	size_t n = strlen(p);
	for (size_t i = 0; i <= n && *p; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		char save = p[i];
		p[i] = 0;
		struct stat sb;
		char *slash = strrchr(p, '/');
		struct grants g = {.base = c->root};
		int pfd = slash ? (*slash = 0, open_dir_granted(p, &g)) : openat(c->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (slash)
			*slash = '/';
		int st = pfd >= 0 ? fstatat(pfd, slash ? slash + 1 : p, &sb, AT_SYMLINK_NOFOLLOW) : -1;
		if (pfd >= 0)
			close(pfd);
		grants_restore(&g);
		if (st < 0 || gone(c, p) || !S_ISDIR(sb.st_mode)) {
			if (st == 0 && !gone(c, p) && S_ISLNK(sb.st_mode))
				rc = fail(c, "layer writes through a symlink: %s '%.300s'", what, path);
			break;	/* nothing there: the marker has nothing to hide */
		}
		p[i] = save;
	}
	free(p);
	return rc;
}

/* Check the whole merge before changing anything, so a refused layer
 * leaves the rootfs as it was: every marker's directory and every
 * directory only implied by deeper members must be a real directory of
 * the rootfs (or absent, or about to be whited out). */
static int check_merge(struct commit *c)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < c->rec_len;) {
		char tag = c->rec[i];
		const char *path = c->rec + i + 1;
		i += strlen(path) + 2;
		if (tag == 'O') {
			rc = check_reachable(c, path, "opaque directory", path);
		} else if (tag == 'W') {
			char *dir = strdup(path);
			if (!dir)
				return fail(c, "out of memory");
			char *slash = strrchr(dir, '/');
			if (slash) {
				*slash = 0;
				rc = check_reachable(c, dir, "whiteout", path);
			}
			free(dir);
		}
	}
	struct names todo = {0};
	if (rc == 0 && (todo.v = malloc(sizeof *todo.v)) && (todo.v[0] = strdup(""))) {
		todo.n = 1;
		todo.cap = 1;
	} else if (rc == 0) {
		rc = fail(c, "out of memory");
	}
	while (rc == 0 && todo.n) {
		char *rel = todo.v[--todo.n];
		struct grants gs = {.base = c->stg}, gr = {.base = c->root};
		struct names names = {0};
		int sfd = open_dir_granted(rel, &gs);
		int rfd = open_dir_granted(rel, &gr);
		if (sfd < 0 || rfd < 0 || list_names(sfd, !*rel, &names) < 0)
			rc = fail(c, "open '%.300s' to merge: %s", *rel ? rel : ".", strerror(errno));
		for (size_t k = 0; rc == 0 && k < names.n; k++) {
			struct stat sb, rb;
			char *child = join(rel, names.v[k]);
			if (!child) {
				rc = fail(c, "out of memory");
				break;
			}
			if (fstatat(sfd, names.v[k], &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode) ||
			    gone(c, child) || fstatat(rfd, names.v[k], &rb, AT_SYMLINK_NOFOLLOW) < 0) {
				free(child);	/* a non-directory, or nothing there to meet */
				continue;
			}
			int implied = dirmap_get(c->implicit, child) != NULL;
			if (S_ISDIR(rb.st_mode)) {
				if (todo.n == todo.cap) {
					size_t cap = todo.cap * 2;
					char **v = realloc(todo.v, cap * sizeof *v);
					if (!v) {
						free(child);
						rc = fail(c, "out of memory");
						break;
					}
					todo.v = v;
					todo.cap = cap;
				}
				todo.v[todo.n++] = child;
				continue;
			}
			if (implied && S_ISLNK(rb.st_mode))
				rc = fail(c, "layer writes through a symlink: '%.300s' is a symlink in an earlier layer",
					  child);
			else if (implied)
				rc = fail(c, "layer writes under '%.300s', which an earlier layer made a non-directory",
					  child);
			free(child);
		}
		names_free(&names);
		if (sfd >= 0)
			close(sfd);
		if (rfd >= 0)
			close(rfd);
		grants_restore(&gr);
		grants_restore(&gs);
		free(rel);
	}
	names_free(&todo);
	return rc;
}

static int apply_markers(struct commit *c)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < c->rec_len;) {
		char tag = c->rec[i];
		const char *path = c->rec + i + 1;
		i += strlen(path) + 2;
		if (tag == 'O')
			rc = apply_opaque(c, path);
		else if (tag == 'W')
			rc = apply_whiteout(c, path);
	}
	return rc;
}

int unpack_commit(int rootfs_fd, int index, const char *hex, char *why, size_t whylen)
{
	char name[STAGING_NAME_MAX];
	struct commit c = {.root = rootfs_fd, .stg = -1, .why = why, .whylen = whylen};
	if (staging_name(index, hex, name, sizeof name, why, whylen) < 0)
		return -1;
	c.stg = openat(rootfs_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.stg < 0)
		return fail(&c, "layer %d is not staged (%s: %s)", index, name, strerror(errno));
	c.implicit = dirmap_new();
	c.whiteout = dirmap_new();
	c.opaque = dirmap_new();
	int rc = c.implicit && c.whiteout && c.opaque ? 0 : fail(&c, "out of memory");
	if (rc == 0)
		rc = read_records(&c);
	if (rc == 0)
		rc = check_merge(&c);
	if (rc == 0)
		rc = apply_markers(&c);
	if (rc == 0)
		rc = merge_tree(&c);
	dirmap_free(c.implicit);
	dirmap_free(c.whiteout);
	dirmap_free(c.opaque);
	free(c.rec);
	close(c.stg);
	if (tree_rm_at(rootfs_fd, name) < 0 && rc == 0)
		rc = fail(&c, "remove staging directory %s: %s", name, strerror(errno));
	return rc;
}
