/* probe NR [ARG...]: make system call NR with up to six arguments
 * (decimal, 0x hex, or negative) and print what came back:
 *   ok <return value>        the call returned
 *   errno <NAME> <number>    it failed
 * If seccomp kills the process the caller sees the signal instead
 * (159 = SIGSYS from a shell). Static, so it runs in any box root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long arg(const char *s)
{
	char *end;
	errno = 0;
	long v = s[0] == '-' ? strtol(s, &end, 0) : (long)strtoul(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "probe: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long a[6] = {0};
	if (argc < 2 || argc > 8) {
		fprintf(stderr, "usage: probe NR [ARG...]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		a[i - 2] = arg(argv[i]);
	long r = syscall(arg(argv[1]), a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r == -1) {
		const char *name = strerrorname_np(errno);
		printf("errno %s %d\n", name ? name : "?", errno);
	} else
		printf("ok %ld\n", r);
	return 0;
}
