#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "box/boxns.h"

const struct box_ns box_ns[BOX_NS_COUNT] = {
	{"user", CLONE_NEWUSER}, {"cgroup", CLONE_NEWCGROUP}, {"ipc", CLONE_NEWIPC},
	{"uts", CLONE_NEWUTS},   {"net", CLONE_NEWNET},       {"mnt", CLONE_NEWNS},
	{"pid", CLONE_NEWPID},
};

int box_ns_send(int sock)
{
	int fds[BOX_NS_COUNT], n = 0, rc = -1;
	char path[32], tag = BOX_NS_TAG;
	for (; n < BOX_NS_COUNT; n++) {
		snprintf(path, sizeof path, "/proc/self/ns/%s", box_ns[n].name);
		fds[n] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0)
			break;
	}
	if (n == BOX_NS_COUNT)
		rc = send_fds(sock, &tag, 1, fds, n);
	while (n-- > 0)
		close(fds[n]);
	return rc;
}
