/* cg-hog: small workloads for the cgroup tests.
 *   cg-hog mem MIB            allocate and touch MIB MiB, 1 MiB at a time
 *   cg-hog file PATH MIB      write MIB MiB to PATH; says ENOSPC if full
 *   cg-hog forks N            fork sleeping children until fork fails or N;
 *                             prints `forks=<n> errno=<name>`, exit 0 on EAGAIN
 *   cg-hog spin SECONDS       busy loop; prints `cpu=<cpu seconds>
 *                             wall=<seconds> ratio=<cpu/wall>`
 *   cg-hog sleep TAG          sleep until killed (TAG names it for pgrep) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int mem(long mib)
{
	for (long i = 0; i < mib; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			printf("malloc failed at %ld MiB\n", i);
			return 1;
		}
		memset(p, 1, 1 << 20);
	}
	printf("allocated %ld MiB\n", mib);
	return 0;
}

static int file(const char *path, long mib)
{
	static char buf[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	memset(buf, 1, sizeof buf);
	if (fd < 0) {
		printf("open %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (long i = 0; i < mib; i++) {
		size_t done = 0;
		while (done < sizeof buf) {
			ssize_t w = write(fd, buf + done, sizeof buf - done);
			if (w < 0) {
				printf("%s after %ld MiB\n", errno == ENOSPC ? "ENOSPC" : strerror(errno), i);
				fflush(stdout);
				return errno == ENOSPC ? 28 : 1;
			}
			done += (size_t)w;
		}
	}
	printf("wrote %ld MiB\n", mib);
	return 0;
}

static int forks(long max)
{
	pid_t kids[100000];
	long n = 0;
	int err = 0;
	while (n < max && n < 100000) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[n++] = p;
	}
	printf("forks=%ld errno=%s\n", n, err == EAGAIN ? "EAGAIN" : err ? strerror(err) : "none");
	fflush(stdout);
	for (long i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return err == EAGAIN ? 0 : 1;
}

static int spin(double seconds)
{
	double t0 = mono();
	volatile unsigned long x = 0;
	struct rusage ru;
	while (mono() - t0 < seconds)
		for (int i = 0; i < 100000; i++)
			x++;
	double wall = mono() - t0;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("cpu=%.3f wall=%.3f ratio=%.3f\n", cpu, wall, cpu / wall);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "mem") == 0)
		return mem(atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "file") == 0)
		return file(argv[2], atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "forks") == 0)
		return forks(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "spin") == 0)
		return spin(atof(argv[2]));
	if (argc == 3 && strcmp(argv[1], "sleep") == 0) {
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: cg-hog mem MIB | file PATH MIB | forks N | spin SECONDS | sleep TAG\n");
	return 2;
}
