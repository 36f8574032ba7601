/* rmtree (lib/base/rmtree.c): removes a tree the box wrote, whatever its
 * modes, and never follows a symlink out of it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rmtree.h"
#include "unit.h"

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

TEST(rmtree_removes_everything_and_follows_no_symlink)
{
	char top[] = "/tmp/kern-unit-rmtree.XXXXXX", p[512];
	CHECK(mkdtemp(top) != NULL);
	/* Outside the tree: a directory with a file a symlink points at. */
	snprintf(p, sizeof p, "%s/outside", top);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof p, "%s/outside/keep", top);
	touch(p);
	/* The tree: empty dirs, a non-empty one, a read-only and an unreadable
	 * dir with files, deep nesting, a symlink to outside, a file. */
	const char *dirs[] = {"t", "t/empty", "t/work", "t/work/work", "t/full", "t/ro", "t/locked",
			      "t/a", "t/a/b", "t/a/b/c"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", top, dirs[i]);
		CHECK(mkdir(p, 0755) == 0);
	}
	const char *files[] = {"t/full/x", "t/ro/y", "t/locked/z", "t/a/b/c/deep", "t/file"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", top, files[i]);
		touch(p);
	}
	snprintf(p, sizeof p, "%s/t/out", top);
	char target[512];
	snprintf(target, sizeof target, "%s/outside", top);
	CHECK(symlink(target, p) == 0);
	snprintf(p, sizeof p, "%s/t/ro", top);
	CHECK(chmod(p, 0555) == 0);
	snprintf(p, sizeof p, "%s/t/locked", top);
	CHECK(chmod(p, 0) == 0);

	snprintf(p, sizeof p, "%s/t", top);
	CHECK(rmtree(p) == 0);
	struct stat st;
	CHECK(lstat(p, &st) < 0);
	snprintf(p, sizeof p, "%s/outside/keep", top);
	CHECK(lstat(p, &st) == 0);
	/* An empty directory and a plain file on their own. */
	snprintf(p, sizeof p, "%s/outside", top);
	CHECK(rmtree(p) == 0 && lstat(p, &st) < 0);
	snprintf(p, sizeof p, "%s/gone", top);
	CHECK(rmtree(p) == 0);
	CHECK(rmdir(top) == 0);
}
