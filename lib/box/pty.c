#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "box/pty.h"

static int on_devpts(int fd)
{
	struct statfs sfs;
	return fstatfs(fd, &sfs) == 0 && sfs.f_type == DEVPTS_SUPER_MAGIC;
}

int pty_devpts_dir(void)
{
	/* The box may have planted links under /dev: none is followed, and
	 * the directory must be a devpts root, not something in its place. */
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/dev/pts", &how, sizeof how);
	if (fd < 0)
		return -1;
	if (!on_devpts(fd)) {
		close(fd);
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* The new mount API by number: musl, which the static binary is built
 * with, has no wrappers for it. */
static int fsconfig_str(int fs, const char *key, const char *value)
{
	return (int)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, key, value, 0);
}

int pty_devpts_detached(void)
{
	int fs = (int)syscall(SYS_fsopen, "devpts", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	int mnt = -1;
	if (fsconfig_str(fs, "ptmxmode", "0666") == 0 && fsconfig_str(fs, "mode", "0620") == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	int e = errno;
	close(fs);
	errno = e;
	return mnt;
}

int pty_open(int dir, int term_fd, long uid, int *master, int *slave, char *why, size_t len)
{
	int unlock = 0, m, s;
	struct termios tio;
	struct winsize ws;
	*master = *slave = -1;
	m = openat(dir, "ptmx", O_RDWR | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (m < 0) {
		snprintf(why, len, "open /dev/pts/ptmx: %s", strerror(errno));
		return -1;
	}
	if (!on_devpts(m)) {
		snprintf(why, len, "/dev/pts/ptmx is not on a devpts filesystem");
		close(m);
		return -1;
	}
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0) {
		snprintf(why, len, "ioctl(TIOCSPTLCK) on /dev/pts/ptmx: %s", strerror(errno));
		close(m);
		return -1;
	}
	/* The slave by the master, not by a path the box could swap. */
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0) {
		snprintf(why, len, "ioctl(TIOCGPTPEER) on /dev/pts/ptmx: %s", strerror(errno));
		close(m);
		return -1;
	}
	/* The caller's modes (erase character, flow control, ...) and size. */
	if (term_fd >= 0 && tcgetattr(term_fd, &tio) == 0)
		(void)tcsetattr(s, TCSANOW, &tio);
	if (term_fd >= 0 && ioctl(term_fd, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(m, TIOCSWINSZ, &ws);
	if (uid >= 0 && fchown(s, (uid_t)uid, (gid_t)-1) < 0) {
		snprintf(why, len, "chown the pty to uid %ld: %s", uid, strerror(errno));
		close(s);
		close(m);
		return -1;
	}
	*master = m;
	*slave = s;
	return 0;
}

int pty_take(int slave)
{
	if (setsid() < 0 && errno != EPERM)
		return -1;
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return -1;
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return -1;
	if (slave > 2)
		close(slave);
	return 0;
}
