/* Collecting the image cache (kern gc, kern recover): retired copies no
 * live box uses, abandoned pulls, incomplete entries, locks of images
 * that are not cached. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/rmtree.h"
#include "base/xdg.h"
#include "image/cache.h"
#include "image/gc.h"

/* The lock of key is free right now (no pull is running). */
static int lock_free(int root, const char *key)
{
	char name[600];
	snprintf(name, sizeof name, "%s.lock", key);
	int fd = openat(root, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	int free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return free_now;
}

/* Take the lock of key without waiting: its descriptor, or -1 when a pull
 * holds it. Taken on the file at the path (kern rmi and gc unlink locks
 * while they hold them), created if missing. */
static int lock_take(int root, const char *key)
{
	char name[600];
	struct stat st, now;
	snprintf(name, sizeof name, "%s.lock", key);
	int fd = openat(root, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    flock(fd, LOCK_EX | LOCK_NB) < 0 ||
	    fstatat(root, name, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
		close(fd);
		return -1;
	}
	return fd;
}

static int pid_dead(const char *digits)
{
	char *end;
	long pid = strtol(digits, &end, 10);
	return pid > 0 && (*end == 0 || *end == '.') && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static void removed(int rc, const char *root, const char *name, const char *what)
{
	if (rc == 0)
		note("removed %s %s/%s", what, root, name);
	else
		warning("cannot remove %s/%s: %s", root, name, strerror(errno));
}

void image_gc(void)
{
	char root[4096], path[4700];
	if (kern_dir(KDIR_CACHE, root, sizeof root, 0) < 0)
		return;
	int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return;
	DIR *d = fdopendir(dup(rfd));
	if (!d) {
		close(rfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name, *p;
		char key[600];
		if (n[0] == '.' && strncmp(n, ".kern-tmp-", 10) != 0)
			continue;
		if (strncmp(n, ".kern-tmp-", 10) == 0) {
			p = strrchr(n, '-');
			if (p && pid_dead(p + 1))
				removed(unlinkat(rfd, n, 0), root, n, "temporary file");
		} else if ((p = strstr(n, ".old-"))) {
			char entry[4700];
			struct stat st;
			snprintf(path, sizeof path, "%s/%s", root, n);
			snprintf(entry, sizeof entry, "%s/%.*s", root, (int)(p - n), n);
			if (fstatat(rfd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !cache_path_in_use(path, entry, st.st_ctime))
				removed(rmtree_at(rfd, n), root, n, "retired copy");
		} else if ((p = strstr(n, ".pull-"))) {
			snprintf(key, sizeof key, "%.*s", (int)(p - n), n);
			if (pid_dead(p + 6) && lock_free(rfd, key))
				removed(rmtree_at(rfd, n), root, n, "abandoned pull");
		} else if ((p = strstr(n, ".lock")) && p[5] == 0) {
			/* The lock of an entry that does not exist (a failed pull):
			 * unlinked while held, as `kern rmi` does. */
			struct stat st;
			char other[700];
			snprintf(key, sizeof key, "%.*s", (int)(p - n), n);
			snprintf(other, sizeof other, "%s.ok", key);
			if (fstatat(rfd, key, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
			    fstatat(rfd, other, &st, AT_SYMLINK_NOFOLLOW) == 0)
				continue;
			int fd = openat(rfd, n, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
			    fstatat(rfd, key, &st, AT_SYMLINK_NOFOLLOW) < 0)
				unlinkat(rfd, n, 0);
			if (fd >= 0)
				close(fd);
		} else if (e->d_type == DT_DIR) {
			/* An entry without .ok whose lock is free: what a pull that
			 * died left, its staging and the layers it had merged, up to
			 * a whole rootfs. No box starts from it and the next pull
			 * starts over anyway, so all of it goes, and its lock (held
			 * meanwhile, so a pull starting now waits). */
			struct stat st;
			snprintf(key, sizeof key, "%s.ok", n);
			if (fstatat(rfd, key, &st, AT_SYMLINK_NOFOLLOW) == 0)
				continue;
			int lfd = lock_take(rfd, n);
			if (lfd < 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", root, n);
			if (fstatat(rfd, key, &st, AT_SYMLINK_NOFOLLOW) < 0 && !cache_path_in_use(path, NULL, 0)) {
				removed(rmtree_at(rfd, n), root, n, "incomplete entry");
				snprintf(key, sizeof key, "%s.image", n);
				unlinkat(rfd, key, 0);
				snprintf(key, sizeof key, "%s.lock", n);
				unlinkat(rfd, key, 0);
			}
			close(lfd);
		}
	}
	closedir(d);
	close(rfd);
}
