/* Collecting the image cache (kern gc, kern recover): retired copies no
 * live box uses, abandoned pulls, staging in incomplete entries, locks of
 * images that are not cached. */
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

#include "diag.h"
#include "imggc.h"
#include "imgcache.h"
#include "rmtree.h"
#include "xdg.h"

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
			/* An entry without .ok whose lock is free: leftovers of a
			 * pull that died; the next pull starts over anyway. */
			struct stat st;
			snprintf(key, sizeof key, "%s.ok", n);
			if (fstatat(rfd, key, &st, AT_SYMLINK_NOFOLLOW) == 0 || !lock_free(rfd, n))
				continue;
			int efd = openat(rfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			DIR *ed = efd >= 0 ? fdopendir(efd) : NULL;
			struct dirent *s;
			while (ed && (s = readdir(ed)))
				if (strncmp(s->d_name, ".kern-", 6) == 0) {
					snprintf(path, sizeof path, "%s/%s", n, s->d_name);
					removed(rmtree_at(efd, s->d_name), root, path, "staging");
				}
			if (ed)
				closedir(ed);
			else if (efd >= 0)
				close(efd);
		}
	}
	closedir(d);
	close(rfd);
}
