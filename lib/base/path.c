#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/path.h"

char *path_next_component(char **rest)
{
	char *c = *rest;
	while (*c == '/')
		c++;
	if (!*c)
		return NULL;
	char *e = strchrnul(c, '/');
	*rest = *e ? e + 1 : e;
	*e = 0;
	return c;
}

int path_is_clean_abs(const char *p)
{
	if (!p || p[0] != '/')
		return 0;
	for (const char *c = p; *c;) {
		while (*c == '/')
			c++;
		const char *e = strchrnul(c, '/');
		size_t n = (size_t)(e - c);
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c = e;
	}
	return strchr(p, '\n') == NULL;
}

/* The slow way: realpath(), then stat() from real up to below /. */
static int ancestry_stat(const char *path, char *real, size_t len, dev_t *dev, ino_t *ino,
			 int max, int *self, int *resolved)
{
	char buf[PATH_MAX], walk[PATH_MAX];
	int n = 0;
	*resolved = realpath(path, buf) != NULL;
	snprintf(walk, sizeof walk, "%s", *resolved ? buf : path);
	snprintf(real, len, "%s", walk);
	*self = 0;
	for (int depth = 0; n < max; depth++) {
		struct stat st;
		if (stat(walk, &st) == 0) {
			*self |= depth == 0;
			dev[n] = st.st_dev;
			ino[n++] = st.st_ino;
		}
		char *slash = strrchr(walk, '/');
		if (!slash || slash == walk)
			break;
		*slash = 0;
	}
	return n;
}

int path_ancestry(const char *path, char *real, size_t len, dev_t *dev, ino_t *ino, int max,
		  int *self, int *resolved)
{
	char walk[PATH_MAX];
	size_t plen = strlen(path);
	int n = 0, whole = 0;
	/* The quick way needs the path to be its own canonical form but for
	 * symlinks, which the walk finds: absolute, no . or .., no // and no
	 * trailing /. */
	if (!path_is_clean_abs(path) || strstr(path, "//") || plen < 2 || path[plen - 1] == '/' ||
	    plen >= sizeof walk || plen >= len)
		return ancestry_stat(path, real, len, dev, ino, max, self, resolved);
	memcpy(walk, path, plen + 1);
	/* Top down: each prefix, until one is missing (then so is every
	 * longer one, and stat() would fail on each as well). */
	for (char *c = walk + 1;; c++) {
		if (*c != '/' && *c)
			continue;
		char save = *c;
		struct stat st;
		*c = 0;
		int ok = lstat(walk, &st) == 0;
		*c = save;
		if ((ok && S_ISLNK(st.st_mode)) || (ok && n == max))
			return ancestry_stat(path, real, len, dev, ino, max, self, resolved);
		if (!ok)
			break;
		dev[n] = st.st_dev;
		ino[n++] = st.st_ino;
		if (!save) {
			whole = 1;
			break;
		}
	}
	/* Nearest first. */
	for (int i = 0, j = n - 1; i < j; i++, j--) {
		dev_t d = dev[i];
		ino_t x = ino[i];
		dev[i] = dev[j];
		ino[i] = ino[j];
		dev[j] = d;
		ino[j] = x;
	}
	*self = *resolved = whole;
	memcpy(real, path, plen + 1);
	return n;
}

int path_collapse(const char *p, char *out, size_t len)
{
	size_t o = 0;
	for (; *p; p++) {
		if (*p == '/' && o > 0 && out[o - 1] == '/')
			continue;
		if (o + 1 >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		out[o++] = *p;
	}
	if (o > 1 && out[o - 1] == '/')
		o--;
	out[o] = 0;
	return 0;
}

int path_is_under(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (n == 1 && b[0] == '/')
		return a[0] == '/';
	return strncmp(a, b, n) == 0 && (a[n] == 0 || a[n] == '/');
}

static int walk_components(int dirfd, const char *rel, int flags, mode_t mode)
{
	char buf[4096];
	int cur = -1;
	size_t n = strlen(rel);
	if (n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, rel, n + 1);
	char *c = buf;
	while (*c == '/')
		c++;
	if (!*c)
		return openat(dirfd, ".", flags | O_CLOEXEC, mode);
	for (;;) {
		char *e = strchrnul(c, '/');
		int last;
		char *next = e;
		while (*next == '/')
			next++;
		last = *next == 0;
		*e = 0;
		if (strcmp(c, "..") == 0) {
			if (cur >= 0)
				close(cur);
			errno = EXDEV;
			return -1;
		}
		int base = cur >= 0 ? cur : dirfd;
		int fd = last ? openat(base, c, flags | O_NOFOLLOW | O_CLOEXEC, mode)
			      : openat(base, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			int saved = errno;
			struct stat st;
			/* O_DIRECTORY|O_NOFOLLOW on a symlink gives ENOTDIR; say ELOOP. */
			if (saved == ENOTDIR && fstatat(base, c, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				saved = ELOOP;
			if (cur >= 0)
				close(cur);
			errno = saved;
			return -1;
		}
		if (cur >= 0)
			close(cur);
		if (last)
			return fd;
		cur = fd;
		c = next;
	}
}

/* openat2(2) with no symlink or magic link anywhere on the walk, plus
 * resolve, where the kernel has it (5.6): the descriptor, or -1 with
 * errno; -2 when it has not (ENOSYS, remembered), and the caller walks
 * one component at a time instead. */
static int openat2_nofollow(int dirfd, const char *path, int flags, mode_t mode,
			    unsigned long long resolve)
{
	static int no_openat2;
	if (no_openat2)
		return -2;
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_NOFOLLOW | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS)
		return (int)fd;
	no_openat2 = 1;
	return -2;
}

int open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	while (*rel == '/')
		rel++;
	int fd = openat2_nofollow(dirfd, *rel ? rel : ".", flags, mode, RESOLVE_BENEATH);
	return fd != -2 ? fd : walk_components(dirfd, rel, flags, mode);
}

int fd_not_symlink(int fd)
{
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	return fd;
}

/* A ".." component anywhere in p. */
static int has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == 0 || c[2] == '/'))
			return 1;
	return 0;
}

int open_nofollow_abs(const char *abs)
{
	int root, fd;
	if (!abs || abs[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	/* The walk refuses ".." (EXDEV); so does the one call. */
	if (has_dotdot(abs)) {
		errno = EXDEV;
		return -1;
	}
	/* The same walk in one call where the kernel can: a box start names
	 * its lower layer this way, and each component's open and close cost
	 * more than the walk. */
	fd = openat2_nofollow(AT_FDCWD, abs, O_PATH, 0, 0);
	if (fd != -2)
		return fd < 0 ? -1 : fd_not_symlink(fd);
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	fd = walk_components(root, abs + 1, O_PATH, 0);
	close(root);
	return fd_not_symlink(fd);
}

int mkdir_beneath(int dirfd, const char *rel, mode_t mode)
{
	char buf[4096];
	int cur;
	size_t n = strlen(rel);
	if (n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, rel, n + 1);
	cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	char *rest = buf, *c;
	while ((c = path_next_component(&rest))) {
		if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0) {
			close(cur);
			errno = EINVAL;
			return -1;
		}
		if (mkdirat(cur, c, mode) < 0 && errno != EEXIST) {
			int saved = errno;
			close(cur);
			errno = saved;
			return -1;
		}
		int fd = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			int saved = errno;
			struct stat st;
			if (saved == ENOTDIR && fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				saved = ELOOP;
			close(cur);
			errno = saved;
			return -1;
		}
		close(cur);
		cur = fd;
	}
	return cur;
}
