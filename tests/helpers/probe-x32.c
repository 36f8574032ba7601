/* probe-x32 NR: make system call NR with the x32 ABI bit (0x40000000) set,
 * as an x32 process would. Prints "ok <ret>" or "errno <NAME> <n>". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: probe-x32 NR\n");
		return 2;
	}
	long nr = strtol(argv[1], NULL, 0) | 0x40000000L;
	long r = syscall(nr, 0, 0, 0, 0, 0, 0);
	if (r == -1) {
		const char *name = strerrorname_np(errno);
		printf("errno %s %d\n", name ? name : "?", errno);
	} else
		printf("ok %ld\n", r);
	return 0;
}
