#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/path.h"
#include "box/mountutil.h"

/* The new mount API has no wrapper in Debian's musl (the release build):
 * the bare system calls, numbered alike on every architecture. */
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif

const char *fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
	return buf;
}

/* The flags a user namespace may not drop when remounting (the kernel
 * locks them): take them from the mount as it is. */
static unsigned long locked_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;
	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	if (sv.f_flag & ST_RDONLY)
		f |= MS_RDONLY;
	return f;
}

int remount_bind(const char *path, unsigned long flags)
{
	return mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags | locked_flags(path), NULL);
}

int remount_ro(const char *path, unsigned long extra)
{
	return remount_bind(path, MS_RDONLY | extra);
}

int make_target(int rootfd, const char *dst, int is_dir)
{
	char parent[4096];
	const char *base = strrchr(dst, '/');
	int pfd, fd;
	if (!base || !base[1]) {
		errno = EINVAL;
		return -1;
	}
	snprintf(parent, sizeof parent, "%.*s", (int)(base - dst), dst);
	base++;
	pfd = mkdir_beneath(rootfd, parent, 0755);
	if (pfd < 0)
		return -1;
	if (is_dir) {
		if (mkdirat(pfd, base, 0755) < 0 && errno != EEXIST)
			goto fail;
		fd = openat(pfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		int c = openat(pfd, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (c < 0 && errno != EEXIST && errno != EISDIR && errno != EROFS && errno != EACCES)
			goto fail;
		if (c >= 0)
			close(c);
		fd = openat(pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode) || (!S_ISDIR(st.st_mode)) != !is_dir) {
			close(fd);
			fd = -1;
			errno = S_ISLNK(st.st_mode) ? ELOOP : (is_dir ? ENOTDIR : EISDIR);
		}
	}
	close(pfd);
	return fd;
fail:
	close(pfd);
	return -1;
}

int tmpfs_at(int dirfd, const char *opts, unsigned long flags, const char **what)
{
	char buf[256], *save = NULL;
	unsigned attrs = ((flags & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0) | ((flags & MS_NOSUID) ? MOUNT_ATTR_NOSUID : 0) |
			 ((flags & MS_NODEV) ? MOUNT_ATTR_NODEV : 0) | ((flags & MS_NOEXEC) ? MOUNT_ATTR_NOEXEC : 0);
	int fs, mnt = -1, e;
	*what = "fsopen(tmpfs)";
	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	snprintf(buf, sizeof buf, "%s", opts);
	*what = "fsconfig(tmpfs)";
	/* Named as mount(2) would name it ("none" otherwise). */
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", "tmpfs", 0) < 0)
		goto out;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (v)
			*v++ = 0;
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, kv, v, 0) < 0)
			goto out;
	}
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		goto out;
	*what = "fsmount(tmpfs)";
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
	if (mnt < 0)
		goto out;
	*what = "move_mount(tmpfs)";
	if (syscall(SYS_move_mount, mnt, "", dirfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		e = errno;
		close(mnt);
		mnt = -1;
		errno = e;
	}
out:
	e = errno;
	close(fs);
	errno = e;
	return mnt;
}
