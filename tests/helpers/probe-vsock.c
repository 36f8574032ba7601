/* probe-vsock [DOMAIN]: socket(DOMAIN, SOCK_STREAM, 0) by raw system call,
 * DOMAIN as a full 64-bit register value (default 40, AF_VSOCK; the
 * kernel reads only the low 32 bits). Prints "ok" or "errno <NAME> <n>". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long domain = argc > 1 ? strtoul(argv[1], NULL, 0) : 40;
	long r = syscall(SYS_socket, domain, (long)SOCK_STREAM, 0L);
	if (r < 0) {
		const char *name = strerrorname_np(errno);
		printf("errno %s %d\n", name ? name : "?", errno);
	} else {
		close((int)r);
		printf("ok\n");
	}
	return 0;
}
