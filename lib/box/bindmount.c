#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/path.h"
#include "base/testhook.h"
#include "box/bindmount.h"
#include "box/mountutil.h"

/* The new mount API has no wrapper in Debian's musl (the release build):
 * the bare system calls, whose numbers are the same on every
 * architecture. */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

/* The object behind fd (name "") or named name in the directory fd,
 * never through a symlink. */
static int open_tree_at(int fd, const char *name, unsigned flags)
{
	/* The test build can play a kernel older than the new mount API. */
	if (test_flag("KERN_TEST_NO_MOUNT_API")) {
		errno = ENOSYS;
		return -1;
	}
	flags |= *name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;
	return (int)syscall(SYS_open_tree, fd, name, flags | OPEN_TREE_CLOEXEC);
}

int bind_clone_at(int dirfd, const char *name, const struct bind_opts *o, const char **what)
{
	*what = o->recursive ? "open_tree(OPEN_TREE_CLONE|AT_RECURSIVE)" : "open_tree(OPEN_TREE_CLONE)";
	int tree = open_tree_at(dirfd, name, OPEN_TREE_CLONE | (o->recursive ? AT_RECURSIVE : 0));
	if (tree < 0 && errno == EINVAL && !o->recursive) {
		/* Locked submounts below the source (every mount the box's user
		 * namespace inherited is locked) refuse a partial copy: take the
		 * whole tree, which the flags below then cover entirely. */
		*what = "open_tree(OPEN_TREE_CLONE|AT_RECURSIVE)";
		tree = open_tree_at(dirfd, name, OPEN_TREE_CLONE | AT_RECURSIVE);
	}
	if (tree < 0)
		return -1;
	/* Only flags are set, none cleared: the kernel's locked flags (a
	 * source mounted nosuid, ro, noexec...) stay as they are. */
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_NOSUID | (o->dev ? 0 : MOUNT_ATTR_NODEV) |
			    (o->ro ? MOUNT_ATTR_RDONLY : 0) | (o->idmap ? MOUNT_ATTR_IDMAP : 0),
		.propagation = MS_PRIVATE,
		.userns_fd = o->idmap ? (unsigned)o->userns_fd : 0,
	};
	*what = "mount_setattr(AT_RECURSIVE)";
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
		int e = errno;
		close(tree);
		errno = e;
		return -1;
	}
	return tree;
}

int bind_clone(int srcfd, const struct bind_opts *o, const char **what)
{
	return bind_clone_at(srcfd, "", o, what);
}

int bind_attach(int treefd, int dstfd, const char **what)
{
	*what = "move_mount";
	return (int)syscall(SYS_move_mount, treefd, "", dstfd, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

int bind_attach_at(int treefd, int dirfd, const char *name, const char **what)
{
	/* Without MOVE_MOUNT_T_SYMLINKS and _T_AUTOMOUNTS the target is
	 * neither followed nor automounted. */
	*what = "move_mount";
	return (int)syscall(SYS_move_mount, treefd, "", dirfd, name, MOVE_MOUNT_F_EMPTY_PATH);
}

/* Before 5.12: a single mount, remounted through dstpath (make_target()
 * proved it has no symlink, and nothing else can change it before the box
 * runs). A source with submounts needs MS_REC, whose remount would reach
 * the top mount only: refused. */
static int bind_old_api(int srcfd, int dstfd, const char *dstpath, const struct bind_opts *o,
			const char **what)
{
	char src[64], dst[64];
	if (o->idmap) {
		*what = "mount_setattr(MOUNT_ATTR_IDMAP)";
		errno = ENOSYS;
		return -1;
	}
	*what = "mount(MS_BIND)";
	if (mount(fd_path(srcfd, src, sizeof src), fd_path(dstfd, dst, sizeof dst), NULL, MS_BIND,
		  NULL) < 0) {
		if (errno == EINVAL) {
			*what = o->ro ? "making every submount read-only needs mount_setattr "
					"(Linux 5.12) for"
				      : "making every submount nosuid,nodev needs mount_setattr "
					"(Linux 5.12) for";
			errno = ENOSYS;
		}
		return -1;
	}
	*what = "mount(MS_REMOUNT|MS_BIND)";
	return remount_bind(dstpath, MS_NOSUID | (o->dev ? 0 : MS_NODEV) | (o->ro ? MS_RDONLY : 0));
}

int bind_fd(int srcfd, int dstfd, const char *dstpath, const struct bind_opts *o, const char **what)
{
	int tree = bind_clone(srcfd, o, what);
	if (tree < 0)
		return errno == ENOSYS ? bind_old_api(srcfd, dstfd, dstpath, o, what) : -1;
	int r = bind_attach(tree, dstfd, what);
	int e = errno;
	close(tree);
	errno = e;
	return r;
}

int bind_noexec(int rootfd, const char *rel, const char **what)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOEXEC};
	*what = "open (beneath the box root, no symlinks)";
	int fd = open_beneath(rootfd, rel, O_PATH | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	*what = "mount_setattr(MOUNT_ATTR_NOEXEC, AT_RECURSIVE)";
	long rc = syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr);
	int e = errno;
	close(fd);
	errno = e;
	return rc < 0 ? -1 : 0;
}
