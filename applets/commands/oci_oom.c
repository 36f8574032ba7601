/* kern-oci: the engine's OOM watch.
 *
 * containerd's runc shim and podman's conmon learn of an OOM kill by
 * watching the memory cgroup of the pid create wrote to --pid-file
 * (memory.oom_control's eventfd on cgroup v1, memory.events on v2), a
 * cgroup they look up once, right after create. That pid is kern's
 * supervisor, which lives outside its box so that an OOM kill in the box
 * can never take it; the engines then watched the supervisor's own
 * cgroup and never saw the box's OOM. So from create to start, while PID
 * 1 waits at the gate and nothing of the workload runs, the supervisor
 * sits in the box's memory cgroup, where the engine finds it; start moves
 * it back to where it was before it opens the gate, and so does delete or
 * kill of a container that never started. Where it was is kept in the
 * container's directory (OOM_HOME_FILE). The box's OOM evidence in kern's
 * own outcome does not depend on any of this.
 *
 * Only for a box at the config's linux.cgroupsPath (root: engines always
 * give one). When the supervisor cannot join (no memory controller, a v2
 * cgroup with children), nothing changes but the engine's flag. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "cgroup/io.h"
#include "cgroup/layout.h"

#include "oci.h"

#define OOM_HOME_FILE "oom-home"

/* Write pid into cgdir/cgroup.procs: 0, or -1 with errno. */
static int move_to(const char *cgdir, pid_t pid)
{
	char path[PATH_MAX + 16], num[24];
	if ((size_t)snprintf(path, sizeof path, "%s/cgroup.procs", cgdir) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(num, sizeof num, "%d", (int)pid);
	return cg_write(AT_FDCWD, path, num);
}

void oci_oom_watch_join(const char *dir, const char *cgroups_path, pid_t sup)
{
	struct cg_layout l;
	if (!cgroups_path || geteuid() != 0 || cg_detect(&l) < 0 || !l.version)
		return;
	struct cg_mount *m = l.version == 2 ? &l.mounts[0] : cg_mount_of(&l, CG_MEMORY);
	if (!m || !m->self[0])
		return;
	const char *rel = cgroups_path;
	while (*rel == '/')
		rel++;
	char box[PATH_MAX], home_file[PATH_MAX + 16];
	if ((size_t)snprintf(box, sizeof box, "%s/%s", m->dir, rel) >= sizeof box ||
	    (size_t)snprintf(home_file, sizeof home_file, "%s/" OOM_HOME_FILE, dir) >= sizeof home_file)
		return;
	/* Where the supervisor goes back to is written before it moves. */
	int fd = open(home_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	int bad = write_all(fd, m->self, strlen(m->self)) < 0;
	if (close(fd) < 0 || bad || move_to(box, sup) < 0)
		unlink(home_file);
}

int oci_oom_watch_leave(const char *dir, pid_t sup, char *why, size_t wl)
{
	char home_file[PATH_MAX + 16], home[PATH_MAX];
	if ((size_t)snprintf(home_file, sizeof home_file, "%s/" OOM_HOME_FILE, dir) >= sizeof home_file) {
		snprintf(why, wl, "%s/" OOM_HOME_FILE ": %s", dir, strerror(ENAMETOOLONG));
		return -1;
	}
	errno = 0;
	long n = read_small_file(home_file, home, sizeof home);
	if (n < 0 && errno == ENOENT)
		return 0;
	/* Written by create into this root-only directory; still, only an
	 * absolute path without a way up is taken. */
	if (n <= 0 || home[0] != '/' || strstr(home, "/..") || strchr(home, '\n')) {
		snprintf(why, wl, "%s: not a cgroup directory", home_file);
		return -1;
	}
	/* ESRCH: the supervisor is gone, and with it its place in the box. */
	if (move_to(home, sup) < 0 && errno != ESRCH) {
		snprintf(why, wl, "moving the supervisor back to %s: %s", home, strerror(errno));
		return -1;
	}
	unlink(home_file);
	return 0;
}
