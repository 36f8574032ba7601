/* path_ancestry (lib/base/path.c): the one-lstat-per-component walk
 * answers exactly what realpath() and a stat() of each ancestor answer,
 * for clean paths, missing ones, and paths through a symlink. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "unit.h"

#define MAXA 64

/* The reference, what box.c computed before path_ancestry existed, put
 * another way: realpath(), then stat() of the path and of each dirname()
 * of it, "/" only when it is the path itself. */
static int slow(const char *path, char *real, dev_t *dev, ino_t *ino, int *self, int *resolved)
{
	char cur[PATH_MAX], up[PATH_MAX];
	struct stat st;
	int n = 0;
	*resolved = realpath(path, real) != NULL;
	if (!*resolved)
		snprintf(real, PATH_MAX, "%s", path);
	*self = stat(real, &st) == 0;
	snprintf(cur, sizeof cur, "%s", real);
	do {
		if (stat(cur, &st) == 0 && n < MAXA) {
			dev[n] = st.st_dev;
			ino[n++] = st.st_ino;
		}
		snprintf(up, sizeof up, "%s", cur);
		snprintf(cur, sizeof cur, "%s", dirname(up));
	} while (strcmp(cur, "/") != 0 && strcmp(cur, ".") != 0);
	return n;
}

static int same(const char *path)
{
	char r1[PATH_MAX], r2[PATH_MAX];
	dev_t d1[MAXA], d2[MAXA];
	ino_t i1[MAXA], i2[MAXA];
	int s1, s2, v1, v2;
	int n1 = path_ancestry(path, r1, sizeof r1, d1, i1, MAXA, &s1, &v1);
	int n2 = slow(path, r2, d2, i2, &s2, &v2);
	if (n1 != n2 || s1 != s2 || v1 != v2 || strcmp(r1, r2) != 0) {
		fprintf(stderr, "path_ancestry(%s): %d %d %d %s, expected %d %d %d %s\n", path, n1, s1,
			v1, r1, n2, s2, v2, r2);
		return 0;
	}
	for (int k = 0; k < n1; k++)
		if (d1[k] != d2[k] || i1[k] != i2[k])
			return 0;
	return 1;
}

/* A fixture under top (a mkdtemp template, filled in): the directories
 * top/deep and a symlink top/link to top/target. 0 when made. */
static int make_tree(char *top, const char *deep, const char *target)
{
	char p[512], q[512];
	if (!mkdtemp(top))
		return -1;
	snprintf(q, sizeof q, "mkdir -p %s/%s", top, deep);
	if (system(q) != 0)
		return -1;
	snprintf(p, sizeof p, "%s/%s", top, target);
	snprintf(q, sizeof q, "%s/link", top);
	return symlink(p, q);
}

TEST(path_ancestry_matches_realpath_and_stat)
{
	char top[] = "/tmp/kern-unit-path.XXXXXX", p[512], q[512];
	CHECK(make_tree(top, "a/b/c", "a/b") == 0);
	const char *tails[] = {"", "/a", "/a/b/c", "/a/b/c/missing", "/a/missing/deeper", "/link",
			       "/link/c", "/link/c/missing", "/a/./b", "/a/../a/b", "//a//b", "/a/b/"};
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		snprintf(p, sizeof p, "%s%s", top, tails[i]);
		CHECK(same(p));
	}
	CHECK(same("/"));
	CHECK(same("/proc/self"));
	snprintf(q, sizeof q, "rm -rf %s", top);
	CHECK(system(q) == 0);
}

/* path_next_component: every component once, in order, whatever the
 * slashes around them; nothing for "", "/" or "///". */
static void components(const char *path, char *out, size_t len)
{
	char buf[256], *rest = buf, *c;
	snprintf(buf, sizeof buf, "%s", path);
	out[0] = 0;
	while ((c = path_next_component(&rest)))
		snprintf(out + strlen(out), len - strlen(out), "[%s]", c);
}

TEST(path_next_component_splits_on_any_run_of_slashes)
{
	char got[256];
	components("a/b/c", got, sizeof got);
	CHECK_STR(got, "[a][b][c]");
	components("//a///b/", got, sizeof got);
	CHECK_STR(got, "[a][b]");
	components("/./../x", got, sizeof got);
	CHECK_STR(got, "[.][..][x]");
	components("", got, sizeof got);
	CHECK_STR(got, "");
	components("///", got, sizeof got);
	CHECK_STR(got, "");
}

/* open_nofollow_abs: the object itself, by any clean absolute path; ELOOP
 * for a symlink anywhere on the path (last component or not), EXDEV for
 * "..", EINVAL for a relative path, ENOENT for a missing one. */
static int opens_as(const char *path, const char *same_as)
{
	struct stat a, b;
	int fd = open_nofollow_abs(path);
	if (fd < 0)
		return 0;
	int ok = fstat(fd, &a) == 0 && stat(same_as, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	close(fd);
	return ok;
}

static int refused_with(const char *path, int err)
{
	errno = 0;
	int fd = open_nofollow_abs(path);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == err;
}

TEST(open_nofollow_abs_opens_clean_paths_and_refuses_symlinks_and_dotdot)
{
	char top[] = "/tmp/kern-unit-nofollow.XXXXXX", p[512], q[512];
	CHECK(make_tree(top, "a/b", "a") == 0);
	snprintf(p, sizeof p, "%s/a/b", top);
	CHECK(opens_as(p, p));
	snprintf(q, sizeof q, "%s//a//b/", top);
	CHECK(opens_as(q, p));
	CHECK(opens_as("/", "/"));
	static const struct {
		const char *tail;
		int err;
	} refused[] = {{"/link", ELOOP},      {"/link/b", ELOOP},    {"/a/../a/b", EXDEV},
		       {"/a/b/..", EXDEV},    {"/a/..b", ENOENT},    {"/missing", ENOENT}};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		snprintf(q, sizeof q, "%s%s", top, refused[i].tail);
		CHECK(refused_with(q, refused[i].err));
	}
	CHECK(refused_with("tmp", EINVAL));
	snprintf(q, sizeof q, "rm -rf %s", top);
	CHECK(system(q) == 0);
}
