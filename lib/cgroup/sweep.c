/* Orphans (isolation.md §2.2 step 7, §8.4): box cgroups, and kern-sup
 * cgroups, whose supervisor pid is dead. Only empty ones go: rmdir(2)
 * refuses a cgroup that still has tasks or children, so a live box is
 * never touched. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup/box.h"

/* The supervisor pid at the end of kern-box-<name>-<pid> or
 * kern-sup-<pid>, or 0 when the name is not one of ours. */
static pid_t owner_pid(const char *name)
{
	const char *dash;
	long v = 0;
	if (strncmp(name, "kern-box-", 9) != 0 && strncmp(name, "kern-sup-", 9) != 0)
		return 0;
	dash = strrchr(name, '-');
	if (!dash || dash < name + 8 || !dash[1])
		return 0;
	if (strncmp(name, "kern-box-", 9) == 0 && dash == name + 8)
		return 0;
	for (const char *p = dash + 1; *p; p++) {
		if (*p < '0' || *p > '9' || v > 4194304)
			return 0;
		v = v * 10 + (*p - '0');
	}
	return (pid_t)v;
}

/* One getdents64 record (the kernel's layout). */
struct dent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

int cg_sweep_dir(const char *parent, int max)
{
	/* The directory is listed with getdents64 into this frame: a DIR is
	 * a heap allocation, which musl's allocator maps as fresh pages and
	 * unmaps again at closedir(), a page fault and a TLB flush each time
	 * (twice per start on v1). */
	char buf[2048] __attribute__((aligned(8)));
	int dfd, done = 0;
	long n;
	/* Once, not per entry: a start in a burst lists hundreds. */
	pid_t self = getpid();
	if (max <= 0 || !parent[0])
		return 0;
	dfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	while (done < max && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
		for (long at = 0; at < n && done < max;) {
			const struct dent64 *e = (const struct dent64 *)(buf + at);
			at += e->reclen;
			pid_t pid = owner_pid(e->name);
			if (e->type != DT_DIR || pid <= 0 || pid == self)
				continue;
			if (kill(pid, 0) == 0 || errno != ESRCH)
				continue;
			/* v1 boxes hold their tasks one level down (cgroup/tree.c). */
			int box = openat(dfd, e->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (box >= 0) {
				cg_tree_rmdir_below(box);
				close(box);
			}
			if (unlinkat(dfd, e->name, AT_REMOVEDIR) == 0)
				done++;
		}
	}
	close(dfd);
	return done;
}
