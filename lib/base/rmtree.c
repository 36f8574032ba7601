#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rmtree.h"

/* Iterative post-order walk: a stack of open directories, so a deep tree
 * the box made cannot exhaust kern's stack. */
struct frame {
	int fd;
	DIR *d;
	char name[NAME_MAX + 1];	/* entry in the parent to rmdir when done */
};

static DIR *open_dir(int parent, const char *name, int *fdout)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		int p = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (p >= 0) {
			char self[64];
			snprintf(self, sizeof self, "/proc/self/fd/%d", p);
			(void)chmod(self, 0700);
			close(p);
		}
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	/* Entries are unlinked through this descriptor: it must be writable. */
	(void)fchmod(fd, 0700);
	DIR *d = fdopendir(fd);
	if (!d)
		close(fd);
	*fdout = fd;
	return d;
}

int rmtree_at(int dirfd, const char *name)
{
	struct frame *st = NULL;
	int depth = 0, cap = 0, rc = 0;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	cap = 16;
	st = malloc(sizeof *st * (size_t)cap);
	if (!st)
		return -1;
	st[0].d = open_dir(dirfd, name, &st[0].fd);
	if (!st[0].d) {
		free(st);
		return -1;
	}
	snprintf(st[0].name, sizeof st[0].name, "%s", name);
	depth = 1;
	while (depth > 0) {
		struct frame *top = &st[depth - 1];
		struct dirent *e = readdir(top->d);
		if (!e) {
			closedir(top->d);
			depth--;
			int parent = depth > 0 ? st[depth - 1].fd : dirfd;
			if (unlinkat(parent, top->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
				rc = -1;
			continue;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) {
			if (unlinkat(top->fd, e->d_name, 0) < 0 && errno != ENOENT)
				rc = -1;
			continue;
		}
		if (unlinkat(top->fd, e->d_name, 0) == 0)
			continue;
		if (depth == cap) {
			cap *= 2;
			struct frame *g = realloc(st, sizeof *st * (size_t)cap);
			if (!g) {
				rc = -1;
				break;
			}
			st = g;
			top = &st[depth - 1];
		}
		struct frame *f = &st[depth];
		f->d = open_dir(top->fd, e->d_name, &f->fd);
		if (!f->d) {
			rc = -1;
			continue;
		}
		snprintf(f->name, sizeof f->name, "%s", e->d_name);
		depth++;
	}
	while (depth > 0)
		closedir(st[--depth].d);
	free(st);
	return rc;
}

int rmtree(const char *path)
{
	return rmtree_at(AT_FDCWD, path);
}
