#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "state/boxproc.h"

/* The value of one "Key:\t..." line of /proc/<pid>/status into val. */
static int status_field(pid_t pid, const char *key, char *val, size_t len)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	size_t klen = strlen(key);
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, klen) != 0 || l[klen] != ':')
			continue;
		l += klen + 1;
		l += strspn(l, " \t");
		snprintf(val, len, "%.*s", (int)strcspn(l, "\n"), l);
		return 0;
	}
	return -1;
}

int proc_running(pid_t pid)
{
	char v[32];
	return pid > 0 && status_field(pid, "State", v, sizeof v) == 0 && v[0] != 'Z' && v[0] != 'X';
}

static pid_t proc_ppid(pid_t pid)
{
	char v[32];
	return status_field(pid, "PPid", v, sizeof v) < 0 ? -1 : (pid_t)strtol(v, NULL, 10);
}

/* NSpid lists the pid in each namespace from the host's down: a box's
 * init reads "<host pid>\t1", one level below ours. */
static int is_ns_init(pid_t pid)
{
	char v[128], *last;
	if (status_field(pid, "NSpid", v, sizeof v) < 0)
		return 0;
	last = strrchr(v, '\t');
	if (!last)
		last = strrchr(v, ' ');
	return last && strcmp(last + 1, "1") == 0;
}

int proc_catches(pid_t pid, int sig)
{
	char v[64];
	if (sig < 1 || sig > 64 || status_field(pid, "SigCgt", v, sizeof v) < 0)
		return 0;
	return (int)((strtoull(v, NULL, 16) >> (sig - 1)) & 1);
}

int proc_is_kern(pid_t pid)
{
	char path[64];
	struct stat theirs, ours;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	return stat(path, &theirs) == 0 && stat("/proc/self/exe", &ours) == 0 &&
	       theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

int proc_seccomp_on(pid_t pid)
{
	char v[32];
	return status_field(pid, "Seccomp", v, sizeof v) == 0 && strcmp(v, "2") == 0;
}

/* The oldest child of pid's main thread: for a box's init, the workload
 * (orphans it adopts are appended after it). */
static pid_t first_child(pid_t pid)
{
	char path[64], buf[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return 0;
	long v = strtol(buf, NULL, 10);
	return v > 1 ? (pid_t)v : 0;
}

static int pidfd_open_pid(pid_t pid)
{
	/* Never a pid <= 1: 0 and -1 mean process groups and "everyone" to
	 * kill(2), and 1 is the host's init. */
	if (pid <= 1)
		return -1;
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int pidfd_exited(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (fd < 0)
		return 1;
	return poll(&p, 1, 0) == 1;
}

int pidfd_wait_exit(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (fd < 0)
		return 1;
	for (;;) {
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		return r == 1;
	}
}

int pidfd_signal(int fd, int sig)
{
	if (fd < 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

int box_procs_open(const struct box_record *rec, struct box_procs *bp)
{
	*bp = (struct box_procs){.sup_fd = -1, .pid1_fd = -1, .work_fd = -1};
	/* Open first, then prove identity, then check the process we opened
	 * is still alive: a pid reused in between fails the last check. */
	bp->sup_fd = pidfd_open_pid(rec->sup_pid);
	if (bp->sup_fd < 0)
		return -1;
	if (!record_live(rec) || pidfd_exited(bp->sup_fd)) {
		box_procs_close(bp);
		return -1;
	}
	/* PID 1 must be the supervisor's child and the init of a pid namespace
	 * below ours; otherwise the recorded pid is not (or no longer) it. */
	if (rec->pid1 > 1) {
		int fd = pidfd_open_pid(rec->pid1);
		if (fd >= 0 && proc_ppid(rec->pid1) == rec->sup_pid && is_ns_init(rec->pid1) &&
		    !pidfd_exited(fd) && !pidfd_exited(bp->sup_fd)) {
			bp->pid1 = rec->pid1;
			bp->pid1_fd = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	if (bp->pid1_fd >= 0) {
		pid_t w = first_child(bp->pid1);
		int fd = pidfd_open_pid(w);
		if (fd >= 0 && proc_ppid(w) == bp->pid1 && !pidfd_exited(fd) && !pidfd_exited(bp->pid1_fd)) {
			bp->work = w;
			bp->work_fd = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	return 0;
}

void box_procs_close(struct box_procs *bp)
{
	int *fds[] = {&bp->sup_fd, &bp->pid1_fd, &bp->work_fd};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}
