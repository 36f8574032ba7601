/* kern oci: a config's linux.sysctl, written into a created container's
 * namespaces while PID 1 waits at the start gate, so the process starts
 * with them as runc's containers do. The writer is a child of create
 * that joins the box's user, network and IPC namespaces through PID 1's
 * pidfd (proved against pid reuse by box_procs_open) and writes the
 * host's /proc/sys files: a sysctl file answers for the namespaces of
 * the process that opens it, and the values (ping_group_range's gids)
 * are read in the box's user namespace. The box's own /proc/sys stays
 * read-only to its workload. Which keys are allowed is sysctl.c's. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "ociruntime/config.h"
#include "ociruntime/sysctl.h"
#include "state/boxproc.h"
#include "state/records.h"

#include "oci.h"

/* Namespace t of pid differs from this process's: join it. */
static int differs(pid_t pid, const char *t)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, t);
	if (stat(path, &a) < 0)
		return 1;
	snprintf(path, sizeof path, "/proc/self/ns/%s", t);
	return stat(path, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

/* The keys of namespace type ns (CLONE_NEWNET or CLONE_NEWIPC). */
static void write_keys(const struct oci_config *c, int own_net, int ns)
{
	for (int i = 0; i < c->nsysctl; i++) {
		char path[256], why[512];
		const char *k = c->sysctl_key[i], *v = c->sysctl_val[i];
		int t = oci_sysctl_ns(k, own_net, path, sizeof path, why, sizeof why);
		if (t < 0)
			oci_fail(EXIT_CLI, "create: config.json: %s", why);
		if (t != ns)
			continue;
		int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			oci_fail(EXIT_SETUP, "create: linux.sysctl.%s: open %s: %s", k, path, strerror(errno));
		if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
			oci_fail(EXIT_SETUP, "create: linux.sysctl.%s = '%.200s': write %s: %s", k, v, path,
				 strerror(errno));
		close(fd);
	}
}

/* The config joined its namespace of this type (linux.namespaces path). */
static int joined(const struct oci_config *c, const char *type)
{
	for (int i = 0; i < c->nns; i++)
		if (!strcmp(c->ns[i], type) && c->ns_path[i] && *c->ns_path[i])
			return 1;
	return 0;
}

static void write_all_keys(int pid1_fd, pid_t pid1, const struct oci_config *c, int own_net)
{
	/* A namespace the box joined by path (network, IPC) is the host
	 * user namespace's: its files answer to host root, so its keys are
	 * written first, as host root, in that namespace alone (their values,
	 * ping_group_range's gids, then read as the host's). */
	static const struct {
		const char *type, *proc;
		int flag;
	} kinds[] = {{"network", "net", CLONE_NEWNET}, {"ipc", "ipc", CLONE_NEWIPC}};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		if (!joined(c, kinds[k].type) || !differs(pid1, kinds[k].proc))
			continue;
		if (setns(pid1_fd, kinds[k].flag) < 0)
			oci_fail(EXIT_SETUP, "create: linux.sysctl: setns(pidfd of the box's PID 1 %d, %s): %s",
				 (int)pid1, kinds[k].proc, strerror(errno));
		write_keys(c, own_net, kinds[k].flag);
	}
	int flags = (differs(pid1, "user") ? CLONE_NEWUSER : 0) | (differs(pid1, "net") ? CLONE_NEWNET : 0) |
		    (differs(pid1, "ipc") ? CLONE_NEWIPC : 0);
	if (flags && setns(pid1_fd, flags) < 0)
		oci_fail(EXIT_SETUP, "create: linux.sysctl: setns(pidfd of the box's PID 1 %d, user|net|ipc): %s",
			 (int)pid1, strerror(errno));
	/* The IPC namespace's files answer to its root's ids (mode bits for
	 * the owner), not to capabilities: be box root, as runc's writer is. */
	if ((flags & CLONE_NEWUSER) && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
		oci_fail(EXIT_SETUP, "create: linux.sysctl: setresuid/setresgid(0) in the box's user namespace: %s",
			 strerror(errno));
	if (!joined(c, "network"))
		write_keys(c, own_net, CLONE_NEWNET);
	if (!joined(c, "ipc"))
		write_keys(c, own_net, CLONE_NEWIPC);
}

/* Everything in a child: its errors are oci_fail()'s lines (stderr and
 * --log) and its exit status, and create, which must tear the box down
 * on failure, only waits. */
int oci_write_sysctls(const char *id, pid_t sup, const struct oci_config *c, int own_net)
{
	pid_t w = fork();
	if (w < 0)
		oci_fail(EXIT_SETUP, "create: linux.sysctl: fork: %s", strerror(errno));
	if (w == 0) {
		char runtime[4096];
		struct box_record rec = {0};
		struct box_procs bp;
		if (records_find(id, runtime, sizeof runtime) < 0 || records_load(runtime, id, &rec) < 0 ||
		    rec.sup_pid != sup || box_procs_open(&rec, &bp) < 0)
			oci_fail(EXIT_SETUP, "create: linux.sysctl: the box record of %s could not be read", id);
		if (bp.pid1_fd < 0)
			oci_fail(EXIT_SETUP, "create: linux.sysctl: the box's PID 1 could not be proved (pidfd)");
		write_all_keys(bp.pid1_fd, bp.pid1, c, own_net);
		_exit(0);
	}
	int st = 0;
	while (waitpid(w, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_SETUP;
}
