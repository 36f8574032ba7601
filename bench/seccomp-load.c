/* bench/seccomp-load: what installing the seccomp filter costs a box.
 * Side by side in one run, each sample in a fresh child process (filters
 * stack, so a process can be measured once):
 *   prebuilt  - kern's way: the program tools/seccomp-gen built at build
 *               time, loaded with one seccomp(2) call;
 *   libseccomp - the same policy compiled at run time: rules added, BPF
 *               generated and loaded by libseccomp (seccomp_load).
 * Both start after PR_SET_NO_NEW_PRIVS and stop when the filter is in.
 *
 *   make bench-seccomp            (from the top of the tree)
 *   build/bench/seccomp-load [SAMPLES] [MODE]   MODE 0 allowlist, 1 denylist, 2 audit */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "seccomp-policy.h"
#include "seccomp_bpf.h"

#if defined(__aarch64__)
#define NATIVE 1
#else
#define NATIVE 0
#endif

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int load_prebuilt(int mode)
{
	struct sock_fprog prog = {
		.len = kern_seccomp_progs[NATIVE][mode].len,
		.filter = (struct sock_filter *)kern_seccomp_progs[NATIVE][mode].insns,
	};
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int load_runtime(int mode, const struct sets *s)
{
	scmp_filter_ctx ctx = build(NATIVE, mode, s);
	int rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

/* One sample in a child; -1 on failure. */
static double sample(int runtime, int mode, const struct sets *s)
{
	int fd[2];
	double us = -1;
	if (pipe(fd) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		close(fd[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(1);
		double t0 = now_us();
		int rc = runtime ? load_runtime(mode, s) : load_prebuilt(mode);
		double t = now_us() - t0;
		if (rc != 0 || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
			_exit(2);
		_exit(write(fd[1], &t, sizeof t) == sizeof t ? 0 : 3);
	}
	close(fd[1]);
	if (p > 0 && read(fd[0], &us, sizeof us) != sizeof us)
		us = -1;
	close(fd[0]);
	if (p > 0)
		waitpid(p, NULL, 0);
	return us;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *name, double *v, int n)
{
	double sum = 0;
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("  %-11s median %8.1f us   mean %8.1f us   p10 %8.1f   p90 %8.1f   (n=%d)\n", name, v[n / 2],
	       sum / n, v[n / 10], v[n * 9 / 10], n);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, mode = argc > 2 ? atoi(argv[2]) : 0;
	struct sets s;
	if (n < 10 || mode < 0 || mode > 2) {
		fprintf(stderr, "usage: seccomp-load [SAMPLES>=10] [MODE 0|1|2]\n");
		return 2;
	}
	read_names("data/seccomp/moby-allow-names.txt");
	read_table(&pinned[0], "x86_64", "data/seccomp/syscalls-x86_64.txt");
	read_table(&pinned[1], "aarch64", "data/seccomp/syscalls-aarch64.txt");
	check_policy();
	resolve(NATIVE, &s);

	double *pre = calloc((size_t)n, sizeof *pre), *rt = calloc((size_t)n, sizeof *rt);
	if (!pre || !rt)
		return 1;
	/* Interleaved, so drift hits both alike. */
	for (int i = 0; i < n; i++) {
		pre[i] = sample(0, mode, &s);
		rt[i] = sample(1, mode, &s);
		if (pre[i] < 0 || rt[i] < 0) {
			fprintf(stderr, "seccomp-load: a sample failed\n");
			return 1;
		}
	}
	printf("seccomp filter install per box, %s mode, %s (%u instructions):\n", mode_names[mode],
	       arches[NATIVE].name, kern_seccomp_progs[NATIVE][mode].len);
	report("prebuilt", pre, n);
	report("libseccomp", rt, n);
	printf("  ratio (median libseccomp / prebuilt): %.0fx\n", rt[n / 2] / pre[n / 2]);
	printf("program sizes (instructions):");
	for (int a = 0; a < KERN_SECCOMP_NARCH; a++)
		for (int m = 0; m < KERN_SECCOMP_NMODE; m++)
			printf(" %s/%s %u", arches[a].name, mode_names[m], kern_seccomp_progs[a][m].len);
	printf("\n");
	return 0;
}
