#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "box/boxns.h"

const struct box_ns box_ns[BOX_NS_COUNT] = {
	{"user", CLONE_NEWUSER}, {"cgroup", CLONE_NEWCGROUP}, {"ipc", CLONE_NEWIPC},
	{"uts", CLONE_NEWUTS},   {"net", CLONE_NEWNET},       {"mnt", CLONE_NEWNS},
	{"pid", CLONE_NEWPID},
};

int box_ns_send(int sock, const char **opening)
{
	int fds[BOX_NS_COUNT], n = 0, rc = -1;
	char tag = BOX_NS_TAG;
	/* One walk of /proc for the seven. */
	int dir = open("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
	*opening = "";
	for (; dir >= 0 && n < BOX_NS_COUNT; n++) {
		fds[n] = openat(dir, box_ns[n].name, O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			*opening = box_ns[n].name;
			break;
		}
	}
	int e = errno;
	if (dir >= 0)
		close(dir);
	if (n == BOX_NS_COUNT) {
		*opening = NULL;
		rc = send_fds(sock, &tag, 1, fds, n);
		e = errno;
	}
	while (n-- > 0)
		close(fds[n]);
	errno = e;
	return rc;
}
