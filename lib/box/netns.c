/* netns.h: joining a network namespace by path. The path comes from a
 * config: it may name any file, so its type is proven by the kernel
 * (nsfs, then the namespace type) on the very descriptor setns uses. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/diag.h"
#include "box/netns.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

/* A detached sysfs of the caller's network namespace: ro, nosuid, nodev,
 * noexec. */
static int sysfs_detached(const char *path)
{
	int fs = (int)syscall(SYS_fsopen, "sysfs", FSOPEN_CLOEXEC);
	if (fs < 0) {
		setup_failed("fsopen(sysfs) for --netns %s: %s", path, strerror(errno));
		return -1;
	}
	int mnt = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		setup_failed("fsconfig(sysfs, FSCONFIG_CMD_CREATE) in network namespace %s: %s", path,
			     strerror(errno));
	else if ((mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0)
		setup_failed("fsmount(sysfs) in network namespace %s: %s", path, strerror(errno));
	close(fs);
	return mnt;
}

int netns_join(const char *path, int sysfs, int *sysfs_fd)
{
	struct statfs sf;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		setup_failed("--netns: open %s: %s", path, strerror(errno));
		return -1;
	}
	int type = fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == NSFS_MAGIC ? ioctl(fd, NS_GET_NSTYPE) : -1;
	if (type != CLONE_NEWNET) {
		setup_failed("--netns %s is not a network namespace (%s)", path,
			     type < 0 ? "not an nsfs file" : "another namespace type");
		close(fd);
		return -1;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		setup_failed("setns(%s, CLONE_NEWNET): %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (sysfs && (*sysfs_fd = sysfs_detached(path)) < 0)
		return -1;
	return 0;
}
