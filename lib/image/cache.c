#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/xdg.h"
#include "image/cache.h"
#include "image/cachekey.h"
#include "state/records.h"

int cache_open(struct cache *c, const char *ref, int create)
{
	memset(c, 0, sizeof *c);
	c->root_fd = -1;
	if (cache_key(ref, c->key, sizeof c->key) < 0) {
		fatal("image", "bad image reference '%s': too long for a cache key", ref);
		return -1;
	}
	if (kern_dir(KDIR_CACHE, c->root, sizeof c->root, create) < 0) {
		if (!create)
			return 0;
		fatal_errno("image", "cannot create the image cache directory");
		return -1;
	}
	c->root_fd = open(c->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->root_fd < 0) {
		if (!create && errno == ENOENT)
			return 0;
		fatal_errno("image", "open %s", c->root);
		return -1;
	}
	return 0;
}

void cache_close(struct cache *c)
{
	if (c->root_fd >= 0)
		close(c->root_fd);
	c->root_fd = -1;
}

void cache_name(const struct cache *c, const char *suffix, char *out, size_t len)
{
	snprintf(out, len, "%s%s", c->key, suffix);
}

/* 1 present and safe, 0 absent, -1 a symlink or not ours. */
static int probe(const struct cache *c, const char *suffix, int want_dir)
{
	char name[400];
	struct stat st;
	cache_name(c, suffix, name, sizeof name);
	if (fstatat(c->root_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode) || st.st_uid != geteuid())
		return -1;
	if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return -1;
	return 1;
}

/* The rootfs is a readable directory with no `.kern-*` leftovers. */
static int rootfs_usable(const struct cache *c)
{
	int fd = openat(c->root_fd, c->key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	int ok = 1;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, ".kern-", 6) == 0)
			ok = 0;
	closedir(d);
	return ok;
}

enum entry_state cache_state(const struct cache *c, const char **what)
{
	static const char *const suffixes[] = {"", ".ok", ".image", ".lock"};
	int have[4];
	if (c->root_fd < 0)
		return ENTRY_ABSENT;
	for (int i = 0; i < 4; i++) {
		have[i] = probe(c, suffixes[i], i == 0);
		if (have[i] < 0) {
			*what = suffixes[i];
			return ENTRY_UNSAFE;
		}
	}
	int usable = have[0] && rootfs_usable(c);
	if (have[1] && have[2] && usable)
		return ENTRY_COMPLETE;
	if (!have[0] && !have[1] && !have[2])
		return ENTRY_ABSENT;
	if (usable && !have[2])
		return ENTRY_NO_CONFIG;
	return ENTRY_NO_ROOTFS;
}

int cache_lock(const struct cache *c)
{
	char name[400];
	cache_name(c, ".lock", name, sizeof name);
	for (int tries = 0; tries < 100; tries++) {
		struct stat st, now;
		int fd = openat(c->root_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			fatal("image", "open %s/%s: %s", c->root, name,
			      errno == ELOOP ? "is a symlink - refusing" : strerror(errno));
			return -1;
		}
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			fatal("image", "%s/%s is not a regular file owned by you - refusing", c->root, name);
			close(fd);
			return -1;
		}
		while (flock(fd, LOCK_EX) < 0)
			if (errno != EINTR) {
				fatal_errno("image", "flock %s/%s", c->root, name);
				close(fd);
				return -1;
			}
		/* `kern rmi` unlinks the lock while holding it: a lock taken on
		 * a file no longer at the path locks nothing. */
		if (fstatat(c->root_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_ino == st.st_ino && now.st_dev == st.st_dev)
			return fd;
		close(fd);
	}
	fatal("image", "cannot take the lock %s/%s", c->root, name);
	return -1;
}

int cache_write_file(const struct cache *c, const char *name, const void *data, size_t len)
{
	char tmp[512];
	snprintf(tmp, sizeof tmp, ".kern-tmp-%s-%d", name, (int)getpid());
	int fd = openat(c->root_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(c->root_fd, tmp, 0);
		errno = e;
		return -1;
	}
	close(fd);
	if (renameat(c->root_fd, tmp, c->root_fd, name) < 0) {
		int e = errno;
		unlinkat(c->root_fd, tmp, 0);
		errno = e;
		return -1;
	}
	return fsync(c->root_fd);
}

char *cache_read_file(const struct cache *c, const char *name, size_t max, size_t *len)
{
	int fd = openat(c->root_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? NULL : read_regular_fd(fd, max, geteuid(), EPERM, len);
}

struct in_use {
	const char *path, *entry;
	time_t retired_at;
	int used;
};

static void check_record(const struct box_record *rec, void *ctx)
{
	struct in_use *u = ctx;
	if (strcmp(rec->lower, u->path) == 0)
		u->used = 1;
	/* A record names the entry path it mounted; a copy retired by
	 * --pull always was that path for every box created before the swap. */
	if (u->entry && strcmp(rec->lower, u->entry) == 0 && rec->created <= (long long)u->retired_at)
		u->used = 1;
}

int cache_path_in_use(const char *path, const char *entry, time_t retired_at)
{
	struct in_use u = {path, entry, retired_at, 0};
	records_each_all(check_record, &u);
	return u.used;
}
