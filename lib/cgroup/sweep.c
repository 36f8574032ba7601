/* Orphans (isolation.md §2.2 step 7, §8.4): box cgroups, and kern-sup
 * cgroups, whose supervisor pid is dead. Only empty ones go: rmdir(2)
 * refuses a cgroup that still has tasks or children, so a live box is
 * never touched. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

int cg_sweep_dir(const char *parent, int max)
{
	int dfd, done = 0;
	DIR *d;
	struct dirent *e;
	if (max <= 0 || !parent[0])
		return 0;
	dfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while (done < max && (e = readdir(d))) {
		pid_t pid = owner_pid(e->d_name);
		if (e->d_type != DT_DIR || pid <= 0 || pid == getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		/* v1 boxes hold their tasks one level down (cgroup/tree.c). */
		int box = openat(dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (box >= 0) {
			cg_tree_rmdir_below(box);
			close(box);
		}
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
			done++;
	}
	closedir(d);
	return done;
}
