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

int exec_next(char **argv)
{
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strncmp(base, "kern-", 5) == 0 && !strchr(argv[0], '/')) {
		int fd = self_exe_fd();
		if (fd >= 0)
			execveat(fd, "", argv, environ, AT_EMPTY_PATH);
		return -1;
	}
	execvp(argv[0], argv);
	return -1;
}

int split_dashdash(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
	return -1;
}
