/* nsjoin.h: joining a namespace by path. The path comes from a config: it
 * may name any file, through any symlink (a Kubernetes pod's containers
 * join their sandbox's namespaces as /proc/PID/ns/ipc and uts, which are
 * symlinks of procfs), so its type is proven by the kernel (nsfs, then
 * the namespace type) on the very descriptor setns uses: whatever the
 * path led to, only a namespace of that type is ever joined. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/diag.h"
#include "box/nsjoin.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

/* A detached mount of fstype in the caller's namespaces: nosuid, nodev,
 * noexec, and read-only for sysfs. */
static int detached(const char *fstype, const char *path)
{
	int fs = (int)syscall(SYS_fsopen, fstype, FSOPEN_CLOEXEC);
	if (fs < 0) {
		setup_failed("fsopen(%s) for the namespace %s: %s", fstype, path, strerror(errno));
		return -1;
	}
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
			 (!strcmp(fstype, "sysfs") ? MOUNT_ATTR_RDONLY : 0);
	int mnt = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		setup_failed("fsconfig(%s, FSCONFIG_CMD_CREATE) in the namespace %s: %s", fstype, path,
			     strerror(errno));
	else if ((mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs)) < 0)
		setup_failed("fsmount(%s) in the namespace %s: %s", fstype, path, strerror(errno));
	close(fs);
	return mnt;
}

int ns_join_path(const char *flag, const char *path, int type, const char *fstype, int *mnt)
{
	struct statfs sf;
	char self[64];
	/* Found with O_PATH, which opens nothing: a FIFO or a device the path
	 * names is never opened (no hang, no side effect of an open). Only a
	 * proven nsfs file is opened for reading, through that descriptor. */
	int at = open(path, O_PATH | O_CLOEXEC), fd = -1;
	if (at < 0) {
		setup_failed("%s: open %s: %s", flag, path, strerror(errno));
		return -1;
	}
	if (fstatfs(at, &sf) == 0 && (unsigned long)sf.f_type == NSFS_MAGIC) {
		snprintf(self, sizeof self, "/proc/self/fd/%d", at);
		fd = open(self, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			setup_failed("%s: open %s: %s", flag, path, strerror(errno));
			close(at);
			return -1;
		}
	}
	close(at);
	int got = fd >= 0 ? ioctl(fd, NS_GET_NSTYPE) : -1;
	if (got != type) {
		setup_failed("%s %s is not a %s namespace (%s)", flag, path,
			     type == CLONE_NEWNET ? "network" : type == CLONE_NEWIPC ? "IPC" : "UTS",
			     got < 0 ? "not an nsfs file" : "another namespace type");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (setns(fd, type) < 0) {
		setup_failed("setns(%s, %s): %s", path,
			     type == CLONE_NEWNET ? "CLONE_NEWNET" : type == CLONE_NEWIPC ? "CLONE_NEWIPC" : "CLONE_NEWUTS",
			     strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (fstype && (*mnt = detached(fstype, path)) < 0)
		return -1;
	return 0;
}
