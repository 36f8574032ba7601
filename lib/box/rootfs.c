#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/netlo.h"
#include "base/path.h"
#include "base/testhook.h"
#include "box/bindmount.h"
#include "box/idmount.h"
#include "box/mountutil.h"
#include "box/nouserns.h"
#include "box/pty.h"
#include "box/rootfs.h"
#include "box/vdisk.h"

#define NOSUID_NODEV (MS_NOSUID | MS_NODEV)

/* tmpfs options: mode, and size= unless size is 0 (unlimited: only the
 * memory cgroup the pages are charged to bounds it). */
static const char *tmpfs_opts(char *buf, size_t len, const char *mode, uint64_t size)
{
	if (size)
		snprintf(buf, len, "mode=%s,size=%llu", mode, (unsigned long long)size);
	else
		snprintf(buf, len, "mode=%s", mode);
	return buf;
}

/* A shifted box's layer (below), made with the new mount API: PID 1
 * reaches its scratch only through a descriptor, and a tmpfs mounted over
 * the directory behind a descriptor is not reached through it (a jump
 * through /proc/self/fd does not cross into the mount on top); the tmpfs's
 * own descriptor is. Returns it, attached on scratch, or -1 with *what. */
static int attach_tmpfs(const char *scratch, uint64_t size, const char **what)
{
	char sz[32];
	int fs, mnt = -1;
	*what = "fsopen(tmpfs)";
	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	snprintf(sz, sizeof sz, "%llu", (unsigned long long)size);
	*what = "fsconfig(mode, size)";
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) == 0 &&
	    (!size || syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", sz, 0) == 0) &&
	    (*what = "fsconfig(FSCONFIG_CMD_CREATE)",
	     syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)) {
		*what = "fsmount";
		mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	}
	int e = errno;
	close(fs);
	errno = e;
	if (mnt < 0)
		return -1;
	*what = "move_mount";
	if (syscall(SYS_move_mount, mnt, "", AT_FDCWD, scratch,
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_SYMLINKS) < 0) {
		e = errno;
		close(mnt);
		errno = e;
		return -1;
	}
	return mnt;
}

/* The box's writable layer (OT-7): a size-capped tmpfs over the scratch
 * directory, private to this mount namespace, holding the overlay's
 * merged/, upper/ and work/. A box can fill it (ENOSPC at --disk) but not
 * the host's disk; its pages are charged to the memory cgroup of the
 * process that writes them, the box's; it is gone with the box. upper/
 * keeps the mode kern-wait gave it on disk (the box's / takes it). On a
 * kernel whose tmpfs has no user.* xattrs (before 6.6) overlayfs cannot
 * keep its whiteouts and opaque directories there with userxattr: the
 * layer stays on the scratch directory's filesystem, uncapped, with a
 * warning. scratch is where this process reaches the scratch directory;
 * a shifted box's becomes the layer's path. Returns a descriptor of the
 * layer's root, kept until the pivot, or -1 where there is no layer. */
static int mount_layer(const struct fs_config *c, char *scratch, size_t len)
{
	static const char *const subs[] = {"merged", "upper", "work"};
	char opts[128], sub[4096], disk[4096];
	const char *what = "mount(tmpfs)";
	struct stat up;
	int layer = -1;
	snprintf(disk, sizeof disk, "%s", scratch);
	snprintf(sub, sizeof sub, "%s/upper", disk);
	if (stat(sub, &up) < 0)
		die_setup_errno("stat %s", sub);
	if (c->shifted ? (layer = attach_tmpfs(disk, c->disk, &what)) < 0
		       : mount("tmpfs", disk, "tmpfs", NOSUID_NODEV,
			       tmpfs_opts(opts, sizeof opts, "0700", c->disk)) < 0)
		die_setup_errno("%s (the writable layer) on %s", what, c->scratch);
	if (layer >= 0)
		fd_path(layer, scratch, len);
	/* The test build can play such a kernel. */
	if ((setxattr(scratch, "user.kern", "", 0, 0) < 0 && (errno == EOPNOTSUPP || errno == ENOTSUP)) ||
	    test_flag("KERN_TEST_NO_TMPFS_XATTR")) {
		if (umount2(scratch, MNT_DETACH) < 0)
			die_setup_errno("umount %s", c->scratch);
		if (layer >= 0)
			close(layer);
		snprintf(scratch, len, "%s", disk);
		warning("the writable layer is not size-capped: this kernel's tmpfs has no user "
			"xattrs for an overlay upper (Linux 6.6); writes to / land in %s", c->scratch);
		return -1;
	}
	/* The layer's root by descriptor: every name below is then one step
	 * from it, where a path through /proc/self/fd costs a walk of /proc. */
	if (layer < 0 && (layer = open(scratch, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die_setup_errno("open %s (the writable layer)", scratch);
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
		snprintf(sub, sizeof sub, "%s/%s", scratch, subs[i]);
		mode_t mode = i == 1 ? (up.st_mode & 07777) : 0700;
		/* chmod after mkdir: the umask must not narrow the upper's mode. */
		if (mkdirat(layer, subs[i], mode) < 0 || fchmodat(layer, subs[i], mode, 0) < 0)
			die_setup_errno("mkdir %s", sub);
	}
	return layer;
}

/* The start socket of a shifted box (idmount.h), else -1. */
static int idm_fd(const struct fs_config *c)
{
	return c->shifted ? c->idm_fd : -1;
}

/* A shifted box's overlay lower: the supervisor's idmapped tree of it,
 * attached on <scratch>/lower (an overlay layer must be a mount of this
 * namespace). Returns a descriptor of its root. */
static int idmapped_lower(const struct fs_config *c, int dir, const char *scratch)
{
	const struct bind_opts ro = {.ro = 1};
	const char *what;
	char at[4200];
	int tree, fd;
	int src = idm_source(c->idm_fd, c->lower, 1, &ro, &tree, &what);
	if (src < 0)
		die_setup_errno("%s %s", what, c->lower);
	snprintf(at, sizeof at, "%s/lower", scratch);
	if (mkdirat(dir, "lower", 0700) < 0 ||
	    (fd = openat(dir, "lower", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die_setup_errno("mkdir %s", at);
	if (idm_attach(src, tree, fd, at, &ro, &what) < 0)
		die_setup_errno("%s %s on %s", what, c->lower, at);
	close(src);
	close(fd);
	/* By name again, which now crosses into the attached tree. */
	return openat(dir, "lower", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* scratch: where upper/, work/ and merged/ are, as this process can reach
 * them (see fs_build); dir: a descriptor of it (an overlay always has one). */
static void mount_root(const struct fs_config *c, int dir, const char *scratch, const char *merged)
{
	char opts[512], lo[64], up[64], wk[64], sub[4096];
	int lfd, ufd, wfd;

	switch (c->root) {
	case ROOT_HOST:
		/* The root is a tmpfs already: --disk sizes it. */
		if (mount("tmpfs", merged, "tmpfs", NOSUID_NODEV,
			  tmpfs_opts(opts, sizeof opts, "0755", c->disk)) < 0)
			die_setup_errno("mount tmpfs on %s", merged);
		return;
	case ROOT_BIND: {
		/* Writable, and nosuid,nodev on every submount of DIR too. */
		const struct bind_opts rw = {0};
		const char *what;
		int tree;
		lfd = idm_source(idm_fd(c), c->lower, 0, &rw, &tree, &what);
		if (lfd < 0)
			die_setup_errno("%s %s", what, c->lower);
		ufd = open(merged, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (ufd < 0)
			die_setup_errno("open %s", merged);
		if (idm_attach(lfd, tree, ufd, merged, &rw, &what) < 0)
			die_setup_errno("%s %s on %s", what, c->lower, merged);
		close(lfd);
		close(ufd);
		return;
	}
	case ROOT_OVERLAY:
		break;
	}
	/* userxattr always: PID 1 mounts from inside a user namespace even for
	 * root, and trusted.* xattrs (whiteouts, opaque dirs) need privilege
	 * over the initial one.
	 * Directories by descriptor: no escaping of ',' or ':' in the lower's
	 * path, and nothing can be swapped in between. */
	lfd = c->shifted ? idmapped_lower(c, dir, scratch) : open_nofollow_abs(c->lower);
	if (lfd < 0)
		die_setup_errno("open overlay lower %s", c->lower);
	snprintf(sub, sizeof sub, "%s/upper", scratch);
	ufd = openat(dir, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		die_setup_errno("open %s", sub);
	snprintf(sub, sizeof sub, "%s/work", scratch);
	wfd = openat(dir, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wfd < 0)
		die_setup_errno("open %s", sub);
	snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s%s", fd_path(lfd, lo, sizeof lo),
		 fd_path(ufd, up, sizeof up), fd_path(wfd, wk, sizeof wk),
		 ",userxattr");
	if (mount("overlay", merged, "overlay", NOSUID_NODEV, opts) < 0) {
		int e = errno;
		if (e == EINVAL)
			die_setup("mount overlay on %s: %s (is the scratch directory %s itself on "
				  "overlayfs? nested overlay upper directories are refused by the kernel)",
				  merged, strerror(e), c->scratch);
		die_setup("mount overlay on %s (lower %s): %s", merged, c->lower, strerror(e));
	}
	close(lfd);
	close(ufd);
	close(wfd);
}

/* --net host on an image root: the host's resolver, copied into the
 * box's private upper (never bound, so the box cannot write through). */
static void copy_resolv_conf(int rootfd, const char *root)
{
	char buf[8192];
	int in = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
	ssize_t n = in < 0 ? -1 : read(in, buf, sizeof buf);
	if (in >= 0)
		close(in);
	if (n < 0)
		return;
	int etc = mkdir_beneath(rootfd, "etc", 0755);
	if (etc < 0)
		die_setup_errno("mkdir %s/etc", root);
	(void)unlinkat(etc, "resolv.conf", 0);
	int out = openat(etc, "resolv.conf", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0 || write(out, buf, (size_t)n) != n)
		die_setup_errno("write %s/etc/resolv.conf", root);
	close(out);
	close(etc);
}

static void mkdir_in(int rootfd, const char *root, const char *rel, mode_t mode)
{
	if (mkdirat(rootfd, rel, mode) < 0 && errno != EEXIST)
		die_setup_errno("mkdir %s/%s", root, rel);
}

/* Bind the host's device node /dev/<name> onto a new file <name> in the
 * directory dir, which path names (the mount takes the path). */
static void bind_node(int dir, const char *path, const char *name)
{
	char host[32];
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		die_setup_errno("create %s", path);
	close(fd);
	snprintf(host, sizeof host, "/dev/%s", name);
	if (mount(host, path, NULL, MS_BIND, NULL) < 0)
		die_setup_errno("bind %s on %s", host, path);
}

/* -t: a devpts instance of the box's own (never the host's ptys), the
 * ptmx link into it, and /dev/tty, which opens the opener's controlling
 * terminal: in a box only the box's pty can be one (the box is a session
 * of its own). */
static void build_pts(int devfd, const char *dev)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/pts", dev);
	if (mkdirat(devfd, "pts", 0755) < 0 ||
	    mount("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC, PTY_DEVPTS_OPTS) < 0)
		die_setup_errno("mount devpts on %s", path);
	snprintf(path, sizeof path, "%s/ptmx", dev);
	if (symlinkat("pts/ptmx", devfd, "ptmx") < 0)
		die_setup_errno("symlink %s", path);
	snprintf(path, sizeof path, "%s/tty", dev);
	bind_node(devfd, path, "tty");
}

/* Returns the descriptor of the root of kern's /dev tmpfs. */
static int build_dev(int rootfd, const char *root, int read_only, int tty, int mqueue_fd)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom"};
	static const char *const links[][2] = {{"fd", "/proc/self/fd"},
					       {"stdin", "/proc/self/fd/0"},
					       {"stdout", "/proc/self/fd/1"},
					       {"stderr", "/proc/self/fd/2"}};
	char dev[4096], path[4096];
	struct stat st;

	/* An image /dev that is a symlink or a file is removed first (MNT-9). */
	if (fstatat(rootfd, "dev", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
	    unlinkat(rootfd, "dev", 0) < 0)
		die_setup_errno("unlink %s/dev", root);
	mkdir_in(rootfd, root, "dev", 0755);
	/* The tmpfs goes on the directory reached without following a link,
	 * and everything in it is then made through the tmpfs's own
	 * descriptor (dev is /proc/self/fd/N, the host's /proc still): a /dev
	 * that a racing process swaps for a symlink to the host meanwhile
	 * leads nowhere (bubblewrap CVE-2026-87766, runc CVE-2021-30465). */
	int dirfd = openat(rootfd, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	const char *what = "open";
	int devfd = dirfd < 0 ? -1 : tmpfs_at(dirfd, "mode=0755,size=64k,nr_inodes=64", MS_NOSUID, &what);
	if (devfd < 0)
		die_setup_errno("%s %s/dev", what, root);
	close(dirfd);
	fd_path(devfd, dev, sizeof dev);
	test_phase("pid1-dev");
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dev, nodes[i]);
		bind_node(devfd, path, nodes[i]);
	}
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dev, links[i][0]);
		if (symlinkat(links[i][1], devfd, links[i][0]) < 0)
			die_setup_errno("symlink %s", path);
	}
	/* /dev/shm and /dev/mqueue stay writable under --ro (clients put
	 * POSIX semaphores and queues there: isolation.md §4.1, "Writable
	 * mounts seen by clients"), but nothing placed there runs (OT-10). */
	snprintf(path, sizeof path, "%s/shm", dev);
	if (mkdirat(devfd, "shm", 01777) < 0 ||
	    mount("tmpfs", path, "tmpfs", NOSUID_NODEV | MS_NOEXEC, "mode=1777") < 0)
		die_setup_errno("mount tmpfs on %s", path);
	snprintf(path, sizeof path, "%s/mqueue", dev);
	if (mkdirat(devfd, "mqueue", 0755) < 0)
		die_setup_errno("mkdir %s", path);
	if (mqueue_fd > 0) {
		/* A joined IPC namespace's, made by the supervisor (nsjoin.h). */
		if (syscall(SYS_move_mount, mqueue_fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			die_setup_errno("move_mount(mqueue) onto %s", path);
		close(mqueue_fd);
	} else if (mount("mqueue", path, "mqueue", NOSUID_NODEV | MS_NOEXEC, NULL) < 0) {
		die_setup_errno("mount mqueue on %s", path);
	}
	if (tty)
		build_pts(devfd, dev);
	(void)read_only;
	return devfd;
}

static int by_depth(const void *a, const void *b)
{
	const struct bind_spec *x = *(const struct bind_spec *const *)a;
	const struct bind_spec *y = *(const struct bind_spec *const *)b;
	int dx = 0, dy = 0;
	for (const char *p = x->dst; *p; p++)
		dx += *p == '/';
	for (const char *p = y->dst; *p; p++)
		dy += *p == '/';
	if (dx != dy)
		return dx - dy;
	/* Stable: equal depths keep their command-line order. */
	return x < y ? -1 : x > y;
}

static void apply_binds(int rootfd, const char *root, const struct fs_config *c)
{
	const struct bind_spec **order = calloc((size_t)c->nbinds + 1, sizeof(const struct bind_spec *));
	char dst[4096];
	if (!order)
		die_setup("out of memory");
	for (int i = 0; i < c->nbinds; i++)
		order[i] = &c->binds[i];
	qsort(order, (size_t)c->nbinds, sizeof(const struct bind_spec *), by_depth);
	for (int i = 0; i < c->nbinds; i++) {
		const struct bind_spec *b = order[i];
		struct stat st;
		const char *what;
		const struct bind_opts o = {.ro = b->ro};
		int tree;
		/* Re-walk the source from / with no-follow opens: a symlink swapped in
		 * after validation is refused, not followed (MNT-8). In a shifted box
		 * the supervisor walks it the same way. */
		int sfd = idm_source(idm_fd(c), b->src, 0, &o, &tree, &what);
		if (sfd < 0 && idm_fd(c) >= 0)
			die_setup_errno("bind source %s: %s", b->src, what);
		if (sfd < 0 || fstat(sfd, &st) < 0)
			die_setup_errno("bind source %s", b->src);
		int tfd = make_target(rootfd, b->dst, S_ISDIR(st.st_mode));
		if (tfd < 0)
			die_setup("bind target %s: %s%s", b->dst, strerror(errno),
				  errno == ELOOP ? " (a component is a symlink in the box root)" : "");
		snprintf(dst, sizeof dst, "%s%s", root, b->dst);
		if (idm_attach(sfd, tree, tfd, dst, &o, &what) < 0)
			die_setup_errno("%s %s on %s", what, b->src, b->dst);
		if (b->noexec && bind_noexec(rootfd, b->dst + 1, &what) < 0)
			die_setup_errno("noexec bind %s: %s", b->dst, what);
		close(sfd);
		close(tfd);
	}
	free(order);
}

/* --tmpfs and vdisk targets: symlinks on the way are removed, directories
 * created; the target itself must end up a directory. Returns its O_PATH
 * descriptor. */
static int target_dir(int rootfd, const char *root, const char *dst)
{
	char walk[4096], *rest = walk, *c;
	int cur = dup(rootfd);
	snprintf(walk, sizeof walk, "%s", dst);
	while (cur >= 0 && (c = path_next_component(&rest))) {
		struct stat st;
		if (fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
		    unlinkat(cur, c, 0) < 0)
			die_setup_errno("unlink %s%s", root, dst);
		if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
			die_setup_errno("mkdir %s in %s", c, dst);
		int next = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			die_setup_errno("open %s in %s", c, dst);
		close(cur);
		cur = next;
	}
	if (cur < 0)
		die_setup_errno("dup the root descriptor for %s", dst);
	return cur;
}

static void mount_tmpfs(int rootfd, const char *root, const struct tmpfs_spec *t)
{
	char path[4096], opts[64], mode[8];
	int cur = target_dir(rootfd, root, t->path);
	unsigned long flags = NOSUID_NODEV | (t->noexec ? MS_NOEXEC : 0) | (t->strictatime ? MS_STRICTATIME : 0);
	snprintf(mode, sizeof mode, "%o", t->mode ? t->mode : 01777);
	/* On the directory the walk ended on, not on its name again. */
	if (mount("tmpfs", fd_path(cur, path, sizeof path), "tmpfs", flags,
		  tmpfs_opts(opts, sizeof opts, mode, t->size)) < 0)
		die_setup_errno("mount tmpfs on %s%s", root, t->path);
	close(cur);
}

/* Disk vdisks (vdisk.h), after the tmpfs mounts as before. Where PID 1
 * makes one itself, the file goes next to its scratch directory, which
 * the writable layer may cover by now. */
static void mount_vdisks(int rootfd, const char *root, const struct fs_config *c)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", c->scratch);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = 0;
	for (int i = 0; i < c->nvdisks; i++) {
		int cur = target_dir(rootfd, root, c->vdisks[i].path);
		vdisk_attach(idm_fd(c), dir, c->vdisks[i].path, c->vdisks[i].size, cur);
		close(cur);
	}
}

static void bind_devices(int rootfd, const char *root, const struct fs_config *c)
{
	char dst[4096];
	for (int i = 0; i < c->ndevices; i++) {
		const char *p = c->devices[i].path;
		struct stat st;
		const char *what;
		int sfd = open_nofollow_abs(p);
		if (sfd < 0 || fstat(sfd, &st) < 0 || !S_ISCHR(st.st_mode))
			die_setup("vgpio device %s: %s", p, sfd < 0 ? strerror(errno) : "not a character device");
		int tfd = make_target(rootfd, p, 0);
		if (tfd < 0)
			die_setup_errno("vgpio target %s", p);
		snprintf(dst, sizeof dst, "%s%s", root, p);
		/* A device bind must keep dev; it still gets nosuid. */
		const struct bind_opts o = {.dev = 1};
		if (bind_fd(sfd, tfd, dst, &o, &what) < 0)
			die_setup_errno("%s %s", what, p);
		close(sfd);
		close(tfd);
	}
}

/* Bind src (the entry onto itself when src is -1) over the entry name of
 * the procfs at proc: 0, or 1 when it does not exist; a bind that fails
 * fails the box. The new mount API takes the entry by name beneath the
 * verified proc, not following a symlink (a fresh procfs, which nothing
 * of the box can have touched yet): no descriptor of it is opened first. */
static int mask_one(int proc, const char *name, int src, const struct bind_opts *o)
{
	const char *what;
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%s", name);
	if (src >= 0 && fstatat(proc, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 1;
	int tree = src < 0 ? bind_clone_at(proc, name, o, &what) : bind_clone(src, o, &what);
	if (tree < 0 && errno == ENOENT && src < 0)
		return 1;
	if (tree < 0 && errno == ENOSYS) {
		/* Before 5.12: bind and remount through the entry's descriptor. */
		int fd = openat(proc, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return 1;
		if (bind_fd(src < 0 ? fd : src, fd, path, o, &what) < 0)
			die_setup_errno("mask %s: %s", path, what);
		close(fd);
		return 0;
	}
	if (tree < 0 || bind_attach_at(tree, proc, name, &what) < 0)
		die_setup_errno("mask %s: %s", path, what);
	close(tree);
	return 0;
}

/* The /proc masks of isolation.md §4.3 (rootfs.h: kern-oci checks a
 * config's maskedPaths and readonlyPaths against them). */
const char *const rootfs_proc_ro[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", "asound", NULL};
const char *const rootfs_proc_null[] = {"kcore", "kallsyms", "kmsg", "keys", "latency_stats",
					"timer_list", "sched_debug", NULL};
const char *const rootfs_proc_empty[] = {"scsi", "acpi", NULL};

/* The masks above, every one made by descriptor from
 * the procfs proc_verified() proved and a null device proved by its device
 * number, whatever the box's /dev and /proc names lead to by now (runc
 * CVE-2025-31133, -52565, -52881). A mask that cannot be made fails the
 * box; only an absent path is passed over. */
static void mask_proc(int proc, int null)
{
	const struct bind_opts ro = {.ro = 1}, dev = {.dev = 1};
	const char *what;
	char path[64];
	struct stat st;

	if (fstat(null, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		die_setup("the /dev/null kern made is not the null device 1:3 - refusing to mask /proc with it");
	if (mask_one(proc, "sys", -1, &ro) != 0)
		die_setup("read-only bind of /proc/sys: the box's procfs has none");
	for (size_t i = 1; rootfs_proc_ro[i]; i++)
		(void)mask_one(proc, rootfs_proc_ro[i], -1, &ro);
	for (size_t i = 0; rootfs_proc_null[i]; i++)
		(void)mask_one(proc, rootfs_proc_null[i], null, &dev);
	int fd;
	for (size_t i = 0; rootfs_proc_empty[i]; i++) {
		snprintf(path, sizeof path, "/proc/%s", rootfs_proc_empty[i]);
		if ((fd = openat(proc, rootfs_proc_empty[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		int t = tmpfs_at(fd, "size=0,mode=0555", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, &what);
		if (t < 0)
			die_setup_errno("empty tmpfs over %s: %s", path, what);
		close(t);
		close(fd);
	}
}

/* The sysfs entries a box's /sys hides (empty read-only tmpfs over each):
 * the firmware tables (DMI serials, ACPI), RAPL energy counters (a power
 * side channel), the block device list and the LSM and debug mount
 * points. rootfs.h: kern-oci checks a config's /sys maskedPaths against
 * it. */
const char *const rootfs_sys_empty[] = {"firmware", "devices/virtual/powercap", "dev/block", "fs/selinux",
					"kernel/security", "kernel/debug", "kernel/tracing", NULL};

/* --sysfs (an OCI config's sysfs mount): a sysfs of the box's own network
 * namespace, read-only, nosuid, nodev, noexec, mounted while the host's
 * fully visible /sys is still in this mount namespace (the kernel allows
 * a user namespace's sysfs only then), and masked before the workload can
 * see it. */
static void mount_sysfs(int rootfd, const char *root, int detached)
{
	char path[4096];
	const char *what;
	struct statfs sf;
	int fd = mkdir_beneath(rootfd, "sys", 0555);
	if (fd >= 0 && detached > 0) {
		/* A joined network namespace's (nsjoin.h), made by the supervisor. */
		if (syscall(SYS_move_mount, detached, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			die_setup_errno("move_mount(sysfs) onto %s/sys", root);
		close(detached);
	} else if (fd < 0 || mount("sysfs", fd_path(fd, path, sizeof path), "sysfs",
				   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		die_setup_errno("mount sysfs on %s/sys", root);
	}
	close(fd);
	int sys = openat(rootfd, "sys", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sys < 0 || fstatfs(sys, &sf) < 0 || sf.f_type != SYSFS_MAGIC)
		die_setup("%s/sys is not the sysfs kern mounted - refusing", root);
	for (size_t i = 0; rootfs_sys_empty[i]; i++) {
		if ((fd = openat(sys, rootfs_sys_empty[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		int t = tmpfs_at(fd, "size=0,mode=0555", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, &what);
		if (t < 0)
			die_setup_errno("empty tmpfs over /sys/%s: %s", rootfs_sys_empty[i], what);
		close(t);
		close(fd);
	}
	close(sys);
}

/* After pivot_root: /proc must be the root of the procfs kern mounted
 * (the only one under the new root), reached without a symlink; a /proc
 * renamed or replaced while the box was built fails the box. */
static int proc_verified(void)
{
	struct statfs sf;
	struct stat st;
	int fd = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		die_setup("open /proc in the box: %s (was it replaced while the box was built?)", strerror(errno));
	if (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 || st.st_ino != 1)
		die_setup("/proc in the box is not the root of the procfs kern mounted (was it replaced while "
			  "the box was built?) - refusing");
	return fd;
}

/* The same for /dev: the very tmpfs build_dev() made. */
static void dev_verified(int devfd)
{
	struct stat want, got;
	int fd = open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &got) < 0 || fstat(devfd, &want) < 0 || got.st_dev != want.st_dev ||
	    got.st_ino != want.st_ino)
		die_setup("/dev in the box is not the tmpfs kern made (was it replaced while the box was "
			  "built?) - refusing");
	close(fd);
}

/* pivot_root(2) refuses (EINVAL) when the mount above the current root
 * is shared: a chroot into a mount point (`mount --rbind / DIR; chroot
 * DIR`, or a tree mounted on a host whose mounts are shared, as systemd
 * makes them) where the mount above "/" lies outside the chroot, out of
 * reach of step 19. "/" is then covered with a copy of itself, box root
 * and all (nouserns_root_mount()), whose parent is the chroot's own "/",
 * private since step 19, and the pivot is done again from the copy's
 * merged. rootfd, devfd and null are the copy's from then on: the
 * original tree goes with the old root. 0, or -1 with errno set. */
static int repivot_from_copy(const char *merged, int *rootfd, int *devfd, int *null)
{
	const char *what;
	int r, d, n;
	if (nouserns_root_mount(&what) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	r = open(merged, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = r < 0 ? -1 : openat(r, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	n = d < 0 ? -1 : openat(d, "null", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (n < 0 || fchdir(r) < 0 || syscall(SYS_pivot_root, ".", ".") < 0) {
		int e = errno;
		if (r >= 0)
			close(r);
		if (d >= 0)
			close(d);
		if (n >= 0)
			close(n);
		errno = e;
		return -1;
	}
	close(*rootfd);
	close(*devfd);
	close(*null);
	*rootfd = r;
	*devfd = d;
	*null = n;
	return 0;
}

static void enter_workdir(const char *workdir)
{
	const char *w = workdir && *workdir ? workdir : "/";
	if (strcmp(w, "/") != 0) {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int fd = root < 0 ? -1 : mkdir_beneath(root, w, 0755);
		if (fd < 0 || fchdir(fd) < 0)
			die_setup_errno("workdir %s", w);
		close(fd);
		close(root);
		return;
	}
	if (chdir("/") < 0)
		die_setup_errno("chdir /");
}

/* A shifted box: every host tree the root will need is asked for at once
 * (idm_prefetch), in the order fs_build takes them; once per process. */
void fs_prefetch(const struct fs_config *c)
{
	static int asked;
	if (!c->shifted || asked++)
		return;
	if (c->root == ROOT_OVERLAY)
		idm_prefetch(c->idm_fd, c->lower, 1, 1);
	else if (c->root == ROOT_BIND)
		idm_prefetch(c->idm_fd, c->lower, 0, 0);
	else
		host_image_prefetch(c);
	for (int i = 0; i < c->nbinds; i++)
		idm_prefetch(c->idm_fd, c->binds[i].src, 0, c->binds[i].ro);
}

void fs_build(const struct fs_config *c)
{
	char scratch[4096], merged[4096], path[4096];
	int rootfd, here = -1, layer = -1;

	/* 17: the mount namespace is fatal, the cgroup namespace best effort.
	 * A shifted PID 1 cannot walk root's private runtime directory to its
	 * scratch: its caller made scratch its working directory while it
	 * still could (see fs_config), and unshare carries that into the new
	 * namespace, where it is reached through /proc/self/fd. */
	fs_prefetch(c);
	if (unshare(CLONE_NEWNS) < 0)
		die_setup_errno("unshare(CLONE_NEWNS)");
	if (!c->cgroup_late)
		(void)unshare(CLONE_NEWCGROUP);
	/* 18 */
	if (!c->uts_joined && sethostname(c->hostname, strnlen(c->hostname, 64)) < 0)
		die_setup_errno("sethostname");
	/* 19: nothing below may propagate back to the host. EINVAL: "/" is
	 * not a mount point (a chroot into a plain directory, where the
	 * pivot below would fail the same way): it becomes one first. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		const char *what = "mount(/, MS_REC|MS_PRIVATE)";
		if (errno != EINVAL)
			die_setup_errno("make / private: %s", what);
		if (nouserns_root_mount(&what) < 0)
			die_setup_errno("make / private: / is not a mount point (a chroot?): %s%s", what,
					errno == ENOSYS ? " (Linux 5.2 or later makes it one; else bind-mount "
							  "the chroot directory onto itself before chroot(8))" : "");
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			die_setup_errno("make / private: mount(/, MS_REC|MS_PRIVATE), after making / a mount point");
	}
	/* 20 */
	snprintf(scratch, sizeof scratch, "%s", c->scratch);
	if (c->shifted) {
		here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (here < 0)
			die_setup_errno("open the scratch directory %s", c->scratch);
		fd_path(here, scratch, sizeof scratch);
	}
	if (c->root == ROOT_OVERLAY)
		layer = mount_layer(c, scratch, sizeof scratch);
	/* Where merged/ (and upper/, work/) are, by descriptor where one is
	 * held. Only an overlay without a layer of its own, outside a shifted
	 * box, opens one (kept in here, closed after the pivot); the other
	 * roots need none. */
	int dir = layer >= 0 ? layer : here;
	if (dir < 0 && c->root == ROOT_OVERLAY &&
	    (dir = here = open(scratch, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die_setup_errno("open the scratch directory %s", scratch);
	snprintf(merged, sizeof merged, "%s/merged", scratch);
	mount_root(c, dir, scratch, merged);
	rootfd = dir >= 0 ? openat(dir, "merged", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			  : open(merged, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		die_setup_errno("open %s", merged);
	if (c->root == ROOT_HOST)
		host_image_populate(rootfd, merged, c);
	else if (c->net_host && c->root == ROOT_OVERLAY)
		copy_resolv_conf(rootfd, merged);
	/* 21: /dev while the host's /dev is still reachable. */
	int devfd = build_dev(rootfd, merged, c->read_only, c->tty, c->mqueue_fd);
	/* 22: binds by depth, then tmpfs mounts, then hardware and vdisks. */
	apply_binds(rootfd, merged, c);
	for (int i = 0; i < c->ntmpfs; i++)
		mount_tmpfs(rootfd, merged, &c->tmpfs[i]);
	mount_vdisks(rootfd, merged, c);
	bind_devices(rootfd, merged, c);
	/* A fresh proc for the box pid namespace, mounted while the host's
	 * fully visible /proc is still in this namespace (the kernel requires
	 * one to allow it). */
	mkdir_in(rootfd, merged, "proc", 0555);
	int fd = openat(rootfd, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || mount("proc", fd_path(fd, path, sizeof path), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			    NULL) < 0)
		die_setup_errno("mount proc on %s/proc", merged);
	close(fd);
	if (c->sysfs)
		mount_sysfs(rootfd, merged, c->sysfs_fd);
	if (c->cgroup2) {
		fd = mkdir_beneath(rootfd, "sys/fs/cgroup", 0755);
		if (fd < 0 || mount("cgroup2", fd_path(fd, path, sizeof path), "cgroup2",
				    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			die_setup_errno("mount cgroup2 on %s/sys/fs/cgroup", merged);
		close(fd);
	}
	/* The mask source, taken now from kern's own /dev tmpfs. */
	int null = openat(devfd, "null", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (null < 0)
		die_setup_errno("open %s/dev/null", merged);
	test_phase("pid1-before-pivot");
	/* 23: pivot, then detach the old root: a surviving old root would expose
	 * the host. */
	if (fchdir(rootfd) < 0)
		die_setup_errno("chdir %s", merged);
	if (syscall(SYS_pivot_root, ".", ".") < 0) {
		if (errno != EINVAL || c->shifted || repivot_from_copy(merged, &rootfd, &devfd, &null) < 0)
			die_setup_errno("pivot_root %s", merged);
	}
	if (umount2(".", MNT_DETACH) < 0)
		die_setup_errno("detach the old root");
	if (chdir("/") < 0)
		die_setup_errno("chdir /");
	close(rootfd);
	if (c->shifted)
		idm_forget(c->idm_fd);
	if (here >= 0)
		close(here);
	if (layer >= 0)
		close(layer);
	test_phase("pid1-after-pivot");
	/* 24 */
	int proc = proc_verified();
	mask_proc(proc, null);
	close(proc);
	close(null);
	dev_verified(devfd);
	close(devfd);
	/* 25 */
	if (c->read_only) {
		if (remount_ro("/", MS_NOSUID | MS_NODEV) < 0)
			die_setup_errno("remount / read-only");
		if (remount_ro("/dev", MS_NOSUID) < 0)
			die_setup_errno("remount /dev read-only");
	}
	/* 26 */
	enter_workdir(c->workdir);
	/* 27 */
	const char *call;
	if (!c->net_host && lo_up(&call) < 0)
		die_setup_errno("%s", call);
}
