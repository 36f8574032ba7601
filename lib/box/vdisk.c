#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/loop.h>
#include <limits.h>
#include <linux/mount.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "box/bindmount.h"
#include "box/idmount.h"
#include "box/vdisk.h"

/* *what of a failed step: it names a path, so it is built here. */
static char step[160];

static int failed(const char **what, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failed(const char **what, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(step, sizeof step, fmt, ap);
	va_end(ap);
	*what = step;
	errno = e;
	return -1;
}

/* The backing file: without a name from the start where the filesystem
 * allows, else created exclusively and unlinked at once. Either way no
 * path ever reaches it again, and it is freed when its last user goes. */
static int backing_file(const char *dir, uint64_t size, const char **what)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0)
		return failed(what, errno, "statvfs %s", dir);
	/* A sparse file larger than the free space would let the box fill the
	 * host's disk, and then see EIO, not ENOSPC. */
	uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (size > avail)
		return failed(what, ENOSPC, "%" PRIu64 " bytes asked, %" PRIu64 " free in %s", size,
			      avail, dir);
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		char name[PATH_MAX];
		static unsigned serial;
		snprintf(name, sizeof name, "%s/.vdisk-%d-%u", dir, (int)getpid(), serial++);
		fd = open(name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && unlink(name) < 0) {
			int e = errno;
			close(fd);
			return failed(what, e, "unlink %s", name);
		}
	}
	if (fd < 0)
		return failed(what, errno, "create a file in %s", dir);
	if (ftruncate(fd, (off_t)size) < 0) {
		int e = errno;
		close(fd);
		return failed(what, e, "ftruncate a file in %s to %" PRIu64 " bytes", dir, size);
	}
	return fd;
}

/* e2fsprogs' mke2fs, from fixed system paths, never PATH. */
static const char *find_mke2fs(void)
{
	static const char *const paths[] = {"/usr/sbin/mke2fs", "/sbin/mke2fs"};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/* mke2fs on the file behind fd, reached by the child as /proc/self/fd/N.
 * No journal: the disk is scratch that dies with the box. Lazy inode
 * tables and noinit_itable at mount: the sparse file reads as zeros, and
 * the kernel's background zeroing would only make the host write them. */
static int format(int fd, unsigned long uid, unsigned long gid, const char **what)
{
	const char *mke2fs = find_mke2fs();
	char dev[32], ext[96], out[512];
	int p[2], st;
	if (!mke2fs)
		return failed(what, ENOENT, "mke2fs (e2fsprogs) is not in /usr/sbin or /sbin, and a "
			      "disk vdisk is formatted with it");
	snprintf(dev, sizeof dev, "/proc/self/fd/%d", fd);
	snprintf(ext, sizeof ext, "root_owner=%lu:%lu,lazy_itable_init=1", uid, gid);
	if (pipe2(p, O_CLOEXEC) < 0)
		return failed(what, errno, "pipe for %s", mke2fs);
	pid_t child = fork();
	if (child == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0 ||
		    set_cloexec(fd, 0) < 0)
			_exit(126);
		char *argv[] = {"mke2fs", "-q", "-F", "-t", "ext4", "-O", "^has_journal", "-m", "0",
				"-E", ext, "-L", "kern-vdisk", dev, NULL};
		char *envp[] = {NULL};
		execve(mke2fs, argv, envp);
		_exit(127);
	}
	int e = errno;
	close(p[1]);
	if (child < 0) {
		close(p[0]);
		return failed(what, e, "fork for %s", mke2fs);
	}
	size_t n = read_full(p[0], out, sizeof out - 1);
	close(p[0]);
	out[n] = 0;
	out[strcspn(out, "\n")] = 0;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return failed(what, errno, "waitpid %s", mke2fs);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return failed(what, EIO, "%s exited with %s %d%s%s", mke2fs, WIFEXITED(st) ? "status" : "signal",
		      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), *out ? ": " : "", out);
}

/* A free loop device bound to fd, clearing itself once its last user
 * (the mount) goes. Another process may take the device between
 * LOOP_CTL_GET_FREE and LOOP_CONFIGURE (EBUSY): ask again. Returns the
 * open device; *num is its number. */
static int attach_loop(int fd, int *num, const char **what)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return failed(what, errno, "open /dev/loop-control");
	struct loop_config lc = {.fd = (unsigned)fd};
	lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	snprintf((char *)lc.info.lo_file_name, sizeof lc.info.lo_file_name, "kern-vdisk");
	for (int tries = 0; tries < 64; tries++) {
		char dev[32];
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			int e = errno;
			close(ctl);
			return failed(what, e, "ioctl(LOOP_CTL_GET_FREE) on /dev/loop-control");
		}
		snprintf(dev, sizeof dev, "/dev/loop%d", n);
		int lfd = open(dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			int e = errno;
			close(ctl);
			return failed(what, e, "open %s", dev);
		}
		if (ioctl(lfd, LOOP_CONFIGURE, &lc) == 0) {
			close(ctl);
			*num = n;
			return lfd;
		}
		int e = errno;
		close(lfd);
		if (e != EBUSY) {
			close(ctl);
			return failed(what, e, "ioctl(LOOP_CONFIGURE) on %s", dev);
		}
	}
	close(ctl);
	return failed(what, EBUSY, "ioctl(LOOP_CONFIGURE): every free loop device was taken first");
}

/* The ext4 on /dev/loop<num>, as a detached mount. */
static int mount_ext4(int num, const char **what)
{
	char dev[32];
	snprintf(dev, sizeof dev, "/dev/loop%d", num);
	int fs = (int)syscall(SYS_fsopen, "ext4", FSOPEN_CLOEXEC);
	if (fs < 0)
		return failed(what, errno, "fsopen(ext4) for %s", dev);
	int mnt = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", dev, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "noinit_itable", NULL, 0) < 0)
		failed(what, errno, "fsconfig(source, noinit_itable) of ext4 on %s", dev);
	else if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		failed(what, errno, "fsconfig(FSCONFIG_CMD_CREATE) of ext4 on %s", dev);
	else if ((mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
		failed(what, errno, "fsmount of ext4 on %s", dev);
	int e = errno;
	close(fs);
	errno = e;
	return mnt;
}

/* The root directory as a vdisk tmpfs's (mode 1777), without mke2fs's
 * lost+found, whose owner (host root) is nobody in the box. */
static int finish_root(int mnt, const char **what)
{
	int root = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return failed(what, errno, "open the root of the new ext4");
	int rc = 0;
	if (fchmod(root, 01777) < 0)
		rc = failed(what, errno, "chmod 1777 the root of the new ext4");
	else if (unlinkat(root, "lost+found", AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = failed(what, errno, "rmdir lost+found on the new ext4");
	close(root);
	return rc;
}

int vdisk_make(const char *dir, uint64_t size, unsigned long uid, unsigned long gid,
	       const char **what)
{
	int num = -1;
	if (size < VDISK_MIN || size > VDISK_MAX)
		return failed(what, EINVAL, "size %" PRIu64 " outside 1m..16t", size);
	int fd = backing_file(dir, size, what);
	if (fd < 0)
		return -1;
	int lfd = format(fd, uid, gid, what) < 0 ? -1 : attach_loop(fd, &num, what);
	int e = errno;
	/* The loop device holds the file now; a failure above frees it. */
	close(fd);
	if (lfd < 0) {
		errno = e;
		return -1;
	}
	int mnt = mount_ext4(num, what);
	if (mnt >= 0 && finish_root(mnt, what) < 0) {
		e = errno;
		close(mnt);
		mnt = -1;
		errno = e;
	}
	e = errno;
	/* Unbound here when nothing mounted it; otherwise the mount is its
	 * last user and AUTOCLEAR unbinds it when the mount goes. */
	if (mnt < 0)
		(void)ioctl(lfd, LOOP_CLR_FD, 0);
	close(lfd);
	errno = e;
	return mnt;
}

void vdisk_attach(int idm_fd, const char *dir, const char *path, uint64_t size, int dstfd)
{
	const char *what;
	int mnt = idm_fd >= 0 ? idm_vdisk(idm_fd, size, &what)
			      : vdisk_make(dir, size, (unsigned long)geteuid(), (unsigned long)getegid(),
					   &what);
	if (mnt < 0 && idm_fd < 0 && errno == EPERM)
		die_setup("vdisk %s: backend = \"disk\" needs a supervisor that is host root (kern box "
			  "as root, without --map-host-root): %s: %s",
			  path, what, strerror(EPERM));
	if (mnt < 0)
		die_setup("vdisk %s: %s: %s", path, what, strerror(errno));
	if (bind_attach(mnt, dstfd, &what) < 0)
		die_setup_errno("vdisk %s: %s", path, what);
	close(mnt);
}
