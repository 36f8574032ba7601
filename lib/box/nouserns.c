#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "box/nouserns.h"
#include "box/userns_why.h"

int userns_mode_parse(const char *s)
{
	if (!strcmp(s, "auto"))
		return USERNS_AUTO;
	if (!strcmp(s, "yes"))
		return USERNS_YES;
	if (!strcmp(s, "no"))
		return USERNS_NO;
	return -1;
}

static int probe_child(void *unused)
{
	(void)unused;
	return 0;
}

int userns_probe(void)
{
	/* The child only returns: a small stack of our own is plenty, and
	 * CLONE_VFORK keeps us off it until the child is gone. */
	static char stack[16384] __attribute__((aligned(16)));
	pid_t p = clone(probe_child, stack + sizeof stack, CLONE_NEWUSER | CLONE_VM | CLONE_VFORK | SIGCHLD,
			NULL);
	if (p < 0)
		return errno ? errno : EPERM;
	while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int userns_refusal(int err)
{
	return err == EPERM || err == EACCES || err == EINVAL || err == ENOSPC || err == EUSERS;
}

void nouserns_note(int err, uid_t uid, gid_t gid)
{
	struct userns_why w;
	userns_why(err, &w);
	note("no user namespace here (clone(CLONE_NEWUSER): %s%s%s); boxing without one: the "
	     "workload runs as uid %u:%u with no capabilities (--userns=no)", strerror(err),
	     w.why[0] ? ": " : "", w.why, (unsigned)uid, (unsigned)gid);
}

int nouserns_root_mount(const char **what)
{
	*what = "open_tree(/, OPEN_TREE_CLONE|AT_RECURSIVE)";
	int fd = (int)syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (fd < 0)
		return -1;
	int rc = -1;
	*what = "move_mount(onto /)";
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) == 0) {
		*what = "fchdir(the new / mount)";
		if (fchdir(fd) == 0) {
			*what = "chroot(the new / mount)";
			rc = chroot(".");
		}
	}
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}
