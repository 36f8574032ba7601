/* vgpio devices (box-cli.md §2.3): the only way a box gets hardware, so
 * the check is by what the node IS (type and device number, found through
 * a no-follow walk), not only by its name. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/path.h"
#include "box/profiles.h"

/* Terminal majors: tty/ttyS (4), tty/console/ptmx (5), vcs (7, the text of
 * the host's consoles), the pts range (136-143). */
static int terminal_major(unsigned maj)
{
	return maj == 4 || maj == 5 || maj == 7 || (maj >= 136 && maj <= 143);
}

int vgpio_open(const char *path, const char **why)
{
	char p[256];
	struct stat st;
	int fd;
	if (!path_is_clean_abs(path) || path_collapse(path, p, sizeof p) < 0) {
		*why = "not a clean absolute path";
		return -1;
	}
	if (!path_is_under(p, "/dev") || strcmp(p, "/dev") == 0) {
		*why = "only device nodes under /dev can be passed to a box";
		return -1;
	}
	if (strncmp(p, "/dev/tty", 8) == 0 || path_is_under(p, "/dev/pts")) {
		*why = "terminals are never passed to a box";
		return -1;
	}
	fd = open_nofollow_abs(p);
	if (fd < 0) {
		*why = errno == ELOOP ? "the path goes through a symlink" : strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
	if (S_ISBLK(st.st_mode))
		*why = "block devices are never passed to a box";
	else if (!S_ISCHR(st.st_mode))
		*why = "not a character device";
	else if (maj == 1 && (min == 1 || min == 2 || min == 4 || min == 11))
		*why = "memory, port and kernel log devices are never passed to a box";
	else if (maj == 10 && min == 232)
		*why = "/dev/kvm is never passed to a box";
	else if (maj == 10 && min == 200)
		*why = "/dev/net/tun is never passed to a box";
	else if (terminal_major(maj))
		*why = "terminals are never passed to a box";
	else
		return fd;
	close(fd);
	return -1;
}
