/* See tree.h. Walks go by path from a base descriptor instead of holding
 * one descriptor per level, so a hostile 2,000-level tree cannot exhaust
 * the descriptor table. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/path.h"
#include "base/strv.h"
#include "base/tree.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

int tree_open(int base, const char *path, int flags)
{
	if (strlen(path) < PATH_MAX)
		return open_beneath(base, path, flags, 0);
	/* Too long for one lookup: walk it one component at a time. */
	int cur = -1;
	const char *c = path;
	for (;;) {
		char name[NAME_MAX + 1];
		while (*c == '/')
			c++;
		const char *e = strchrnul(c, '/'), *next = e;
		while (*next == '/')
			next++;
		size_t n = (size_t)(e - c);
		int last = *next == 0, fd;
		if (n == 0) {
			fd = openat(cur >= 0 ? cur : base, ".", flags | O_CLOEXEC);
		} else if (n > NAME_MAX) {
			errno = ENAMETOOLONG;
			fd = -1;
		} else {
			memcpy(name, c, n);
			name[n] = 0;
			if (strcmp(name, "..") == 0) {
				errno = EXDEV;
				fd = -1;
			} else {
				fd = openat(cur >= 0 ? cur : base, name,
					    last ? flags | O_NOFOLLOW | O_CLOEXEC
						 : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			}
		}
		int saved = errno;
		if (cur >= 0)
			close(cur);
		if (fd < 0) {
			errno = saved;
			return -1;
		}
		if (last || n == 0)
			return fd;
		cur = fd;
		c = next;
	}
}

int tree_chmod(int dirfd, const char *name, mode_t mode)
{
	static int no_fchmodat2;
	if (!no_fchmodat2) {
		if (syscall(SYS_fchmodat2, dirfd, name, mode, AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
		if (errno == EOPNOTSUPP) {
			errno = ELOOP;	/* it is a symlink */
			return -1;
		}
		if (errno != ENOSYS)
			return -1;
		no_fchmodat2 = 1;
	}
	/* Older kernels: pin the object with O_PATH, then chmod the pinned
	 * inode through /proc. */
	char proc[64];
	int fd = fd_not_symlink(openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0)
		return -1;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	int rc = chmod(proc, mode);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* The stack of directory paths (relative to the walk's base) still to
 * empty: push dir/name. */
static int push(struct strv *s, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);
	if (p)
		snprintf(p, a + b + 2, "%s%s%s", dir, a ? "/" : "", name);
	return strv_take(s, p);
}

/* Make sure the owner may list, enter and change the directory name. */
static int grant(int dirfd, const char *name, const struct stat *st)
{
	if ((st->st_mode & 0700) == 0700)
		return 0;
	return tree_chmod(dirfd, name, (st->st_mode & 07777) | 0700);
}

/* Unlink every non-directory in the directory at path and push its
 * subdirectories. Returns the number pushed, or -1. */
static int empty_one(int base, const char *path, struct strv *s)
{
	int fd = tree_open(base, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	int pushed = 0;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d))) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    grant(fd, e->d_name, &st) < 0 || push(s, path, e->d_name) < 0) {
			int saved = errno ? errno : EIO;
			closedir(d);
			errno = saved;
			return -1;
		}
		pushed++;
	}
	closedir(d);
	return pushed;
}

/* Remove the directory at path below base, whose own permissions already
 * allow the owner in. */
static int remove_dir(int base, const char *path)
{
	struct strv s = {0};
	int rc = 0, stuck = 0;
	if (push(&s, "", path) < 0) {
		strv_free(&s);
		return -1;
	}
	while (s.n) {
		char *top = s.v[s.n - 1];
		int pushed = empty_one(base, top, &s);
		if (pushed < 0) {
			rc = -1;
			break;
		}
		if (pushed)
			continue;
		/* Its subdirectories are gone: remove it from its parent. */
		char *slash = strrchr(top, '/');
		int pfd = base, own = 0;
		if (slash) {
			*slash = 0;
			pfd = tree_open(base, top, O_PATH | O_DIRECTORY);
			*slash = '/';
			own = 1;
		}
		int r = pfd < 0 ? -1 : unlinkat(pfd, slash ? slash + 1 : top, AT_REMOVEDIR);
		int saved = errno;
		if (own && pfd >= 0)
			close(pfd);
		if (r < 0 && saved == ENOTEMPTY && ++stuck < 8)
			continue;	/* an entry appeared or readdir missed one: go again */
		if (r < 0 && saved != ENOENT) {
			errno = saved;
			rc = -1;
			break;
		}
		stuck = 0;
		free(top);
		s.v[--s.n] = NULL;
	}
	int saved = errno;
	strv_free(&s);
	errno = saved;
	return rc;
}

int tree_rm_at(int dirfd, const char *name)
{
	struct stat st;
	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return -1;
	if (grant(dirfd, name, &st) < 0)
		return -1;
	/* Walk below a descriptor of the directory's parent, by name. */
	int base = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -1;
	int rc = remove_dir(base, name);
	int saved = errno;
	close(base);
	errno = saved;
	return rc;
}

int tree_rm_children(int dirfd, int (*keep)(const char *name))
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	/* Collect the names first: removing while reading is unspecified. */
	struct strv names = {0};
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (keep && keep(e->d_name))
			continue;
		if (strv_push(&names, e->d_name) < 0) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	for (size_t i = 0; rc == 0 && i < names.n; i++)
		if (tree_rm_at(dirfd, names.v[i]) < 0)
			rc = -1;
	strv_free(&names);
	return rc;
}
