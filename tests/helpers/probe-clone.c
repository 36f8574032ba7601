/* probe-clone FLAGS: the raw clone system call with FLAGS (hex; up to 64
 * bits, SIGCHLD added) and no new stack, like fork. The child exits at
 * once; prints "ok" when a child ran, else "errno <NAME> <n>". */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: probe-clone FLAGS\n");
		return 2;
	}
	/* The exit signal (low byte) is always SIGCHLD, so waitpid sees the child. */
	unsigned long flags = (strtoul(argv[1], NULL, 0) & ~0xffUL) | SIGCHLD;
	fflush(stdout);
	long r = syscall(SYS_clone, flags, 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	if (r < 0) {
		const char *name = strerrorname_np(errno);
		printf("errno %s %d\n", name ? name : "?", errno);
		return 0;
	}
	int st;
	if (waitpid((pid_t)r, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("child failed\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
