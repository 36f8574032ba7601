#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/selfexec.h"

extern char **environ;

int self_exe_fd(void)
{
	static int fd = -1;
	if (fd < 0)
		fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	return fd;
}

const char *kern_applet_of(const char *argv0)
{
	if (!argv0)
		return NULL;
	const char *slash = strrchr(argv0, '/');
	const char *base = slash ? slash + 1 : argv0;
	if (strcmp(base, "kern") == 0)
		return base + 4;
	if (strncmp(base, "kern-", 5) == 0)
		return base + 5;
	return NULL;
}

int exec_next(char **argv)
{
	if (!strchr(argv[0], '/') && kern_applet_of(argv[0])) {
		int fd = self_exe_fd();
		if (fd >= 0)
			execveat(fd, "", argv, environ, AT_EMPTY_PATH);
		return -1;
	}
	execvp(argv[0], argv);
	return -1;
}
