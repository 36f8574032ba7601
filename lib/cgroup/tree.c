/* cgroup v1 box cgroups are two levels: the box cgroup carries the caps and
 * the workload lives in its child `box`. PID 1's cgroup namespace starts at
 * the child, so even a box that managed to mount a v1 hierarchy would see
 * (and could raise) only the child's own, uncapped, limits: the caps sit
 * one level up, out of its view. Everything that walks a box therefore
 * walks a small tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup/box.h"
#include "cgroup/io.h"

#define TREE_DEPTH 16

static void inherit_cpuset(int parent, int child)
{
	static const char *const files[] = {"cpuset.mems", "cpuset.cpus"};
	char buf[1024];
	for (int i = 0; i < 2; i++)
		if (cg_read(parent, files[i], buf, sizeof buf) > 0)
			(void)cg_write(child, files[i], buf);
}

int cg_leaf_make(struct cg_hier *h)
{
	if (mkdirat(h->fd, CG_LEAF, 0755) < 0 && errno != EEXIST)
		return -1;
	if (cg_leaf_open(h) < 0)
		return -1;
	if (h->ctls & CG_BIT(CG_CPUSET))
		inherit_cpuset(h->fd, h->leaf_fd);
	return 0;
}

int cg_leaf_open(struct cg_hier *h)
{
	h->leaf_fd = openat(h->fd, CG_LEAF, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return h->leaf_fd < 0 ? -1 : 0;
}

static int pids_of(int dirfd, pid_t *out, int max)
{
	char buf[16384];
	int n = 0;
	if (cg_read(dirfd, "cgroup.procs", buf, sizeof buf) < 0)
		return -1;
	for (char *p = buf; *p && n < max;) {
		long v = strtol(p, &p, 10);
		if (v > 0)
			out[n++] = (pid_t)v;
		while (*p == '\n')
			p++;
	}
	return n;
}

static int listed(const pid_t *a, int n, pid_t p)
{
	for (int i = 0; i < n; i++)
		if (a[i] == p)
			return 1;
	return 0;
}

/* One pass over one cgroup's tasks. A pid read from cgroup.procs may be
 * reused before we signal it, so each is pinned with a pidfd first and
 * signalled only if it is still listed afterwards. */
static int kill_pass(int dirfd)
{
	pid_t before[1024], after[1024];
	int fds[1024];
	int n = pids_of(dirfd, before, 1024);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		fds[i] = (int)syscall(SYS_pidfd_open, before[i], 0);
	int m = pids_of(dirfd, after, 1024);
	for (int i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (m > 0 && listed(after, m, before[i]))
			(void)syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0);
		close(fds[i]);
	}
	return n;
}

/* kernfs counts a directory's subdirectories in its link count: a cgroup
 * with none (the usual leaf) needs no listing, and one with exactly one,
 * named CG_LEAF (the usual box cgroup), needs none either. Teardown would
 * otherwise pay for a listing on every walk. -1: unknown. */
static int children(int dirfd)
{
	struct stat st;
	return fstat(dirfd, &st) < 0 || st.st_nlink < 2 ? -1 : (int)(st.st_nlink - 2);
}

/* The leaf, when it is the only child (kids, from children()); -1 otherwise. */
static int only_leaf(int dirfd, int kids)
{
	return kids == 1 ? openat(dirfd, CG_LEAF, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
}

/* Calls fn on dirfd's cgroup and every cgroup below it, children first. */
static int walk(int dirfd, int depth, int (*fn)(int fd, void *arg), void *arg)
{
	int total = 0, dup_fd;
	DIR *d;
	struct dirent *e;
	if (depth > TREE_DEPTH)
		return 0;
	int kids = children(dirfd);
	if (kids == 0)
		return fn(dirfd, arg);
	int leaf = only_leaf(dirfd, kids);
	if (leaf >= 0) {
		total = walk(leaf, depth + 1, fn, arg);
		close(leaf);
		return total + fn(dirfd, arg);
	}
	dup_fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dup_fd >= 0 && (d = fdopendir(dup_fd))) {
		while ((e = readdir(d))) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			int sub = openat(dirfd, e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				total += walk(sub, depth + 1, fn, arg);
				close(sub);
			}
		}
		closedir(d);
	} else if (dup_fd >= 0) {
		close(dup_fd);
	}
	return total + fn(dirfd, arg);
}

static int kill_fn(int fd, void *arg)
{
	(void)arg;
	return kill_pass(fd);
}

int cg_tree_kill(int dirfd)
{
	return walk(dirfd, 0, kill_fn, NULL);
}

static int rmdir_children_fn(int fd, void *arg)
{
	DIR *d;
	struct dirent *e;
	(void)arg;
	int kids = children(fd);
	if (kids == 0 || (kids == 1 && unlinkat(fd, CG_LEAF, AT_REMOVEDIR) == 0))
		return 0;
	int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
		if (dup_fd >= 0)
			close(dup_fd);
		return 0;
	}
	/* Children were visited first, so theirs are gone: now these. */
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.')
			(void)unlinkat(fd, e->d_name, AT_REMOVEDIR);
	closedir(d);
	return 0;
}

void cg_tree_rmdir_below(int dirfd)
{
	(void)walk(dirfd, 0, rmdir_children_fn, NULL);
}

struct sum {
	const char *file, *key;
	uint64_t total;
	int found;
};

static int sum_fn(int fd, void *arg)
{
	struct sum *s = arg;
	uint64_t v;
	if (cg_read_key(fd, s->file, s->key, &v) == 0 && v != CG_UNLIMITED) {
		s->total += v;
		s->found = 1;
	}
	return 0;
}

int cg_tree_sum_key(int dirfd, const char *file, const char *key, uint64_t *out)
{
	struct sum s = {file, key, 0, 0};
	(void)walk(dirfd, 0, sum_fn, &s);
	if (!s.found) {
		errno = ENOENT;
		return -1;
	}
	*out = s.total;
	return 0;
}
