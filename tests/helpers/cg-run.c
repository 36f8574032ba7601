/* cg-run: a test-only supervisor for the cgroup module, the way kern-wait
 * uses it: create the box cgroup, enter, fork the workload, leave at once,
 * watch for OOM (v1: eventfd), reap, read the evidence, remove.
 *
 *   cg-run [LIMITS] -- CMD...   run CMD in a box cgroup; the last stderr
 *                               line is `cg-run: byte1=B byte2=O byte3=S
 *                               exit=E`; exits like kern box would
 *   cg-run [LIMITS] --show      create, print where and what is in force,
 *                               remove
 *   cg-run [LIMITS] --cycles N  create and destroy N times; prints the mean
 *                               cost in microseconds
 *   cg-run --sweep              sweep orphans; prints how many went
 *   cg-run --open [LIMITS] ...  find the cgroup kern-cg made for this pid
 *                               (cg_open) instead of creating one
 *
 * LIMITS: --name N --memory S --pids-limit N --cpus C --cpuset L
 *         --require-limits --allow-uncapped --no-scope --record (print
 *         cg_record) --open-record REC (kern exec: attach to REC) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/parse.h"
#include "cgroup/cgroup.h"

static const char oom_sentence[] =
	"kern: the workload was killed by the kernel's OOM killer against this box's own memory "
	"cap. Raise it with `--memory <size>` (or `memory = \"<size>\"` in a vcpu: profile) if the "
	"workload needs more.";

static int usage(void)
{
	fprintf(stderr, "usage: cg-run [LIMITS] (-- CMD... | --show | --cycles N) | cg-run --sweep\n");
	return 2;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show(struct cg_box *cg)
{
	unsigned e = cg_enforced(cg);
	printf("where: %s\n", cg_describe(cg));
	printf("enforced:%s%s%s%s\n", e & CG_HAS_MEMORY ? " memory" : "", e & CG_HAS_PIDS ? " pids" : "",
	       e & CG_HAS_CPU ? " cpu" : "", e & CG_HAS_CPUSET ? " cpuset" : "");
	printf("byte1: %d\nv2: %d\nrecord: %s\n", cg_byte1(cg), cg_is_v2(cg), cg_record(cg));
	fflush(stdout);
}

/* kern exec: join a running box by its record, run CMD, report. */
static int exec_in(const char *record, char **cmd)
{
	struct cg_box *cg;
	pid_t pid;
	int st;
	if (cg_open_record(record, &cg) < 0) {
		fprintf(stderr, "cg-run: bad record\n");
		return 125;
	}
	if (cg_join(cg) < 0) {
		fprintf(stderr, "cg-run: attach: %s\n", strerror(errno));
		return 125;
	}
	pid = fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	int oom = cg_oom_evidence(cg);
	fprintf(stderr, "cg-run: byte1=%d byte2=%d byte3=%d exit=%d\n", cg_byte1(cg), oom,
		WIFSIGNALED(st) ? WTERMSIG(st) : 0, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	cg_close(cg);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	struct cg_limits req = {0};
	const char *name = "cgrun", *record = NULL;
	int i, show_only = 0, print_record = 0, open_only = 0;
	long cycles = 0;
	uint64_t u;
	unsigned long long n;

	diag_init();
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--sweep") == 0) {
			printf("swept %d\n", cg_sweep_orphans(128));
			return 0;
		} else if (strcmp(a, "--show") == 0)
			show_only = 1;
		else if (strcmp(a, "--open") == 0)
			open_only = 1;
		else if (strcmp(a, "--record") == 0)
			print_record = 1;
		else if (strcmp(a, "--require-limits") == 0)
			req.require_limits = 1;
		else if (strcmp(a, "--allow-uncapped") == 0)
			req.allow_uncapped = 1;
		else if (strcmp(a, "--no-scope") == 0)
			req.no_scope = 1;
		else if (!v)
			return usage();
		else if (strcmp(a, "--name") == 0)
			name = argv[++i];
		else if (strcmp(a, "--open-record") == 0)
			record = argv[++i];
		else if (strcmp(a, "--cycles") == 0)
			cycles = atol(argv[++i]);
		else if (strcmp(a, "--memory") == 0 && parse_size(argv[++i], 0, &u) == 0) {
			req.memory = u;
			req.memory_given = 1;
		} else if (strcmp(a, "--pids-limit") == 0 && parse_u64(argv[++i], &n) == 0) {
			req.pids = n;
			req.pids_given = 1;
		} else if (strcmp(a, "--cpus") == 0 && parse_cpus(argv[++i], &u) == 0)
			req.cpu_micro = u;
		else if (strcmp(a, "--cpuset") == 0)
			req.cpuset = argv[++i];
		else
			return usage();
	}
	if (record)
		return i + 1 < argc ? exec_in(record, argv + i + 1) : usage();

	if (cycles > 0) {
		double t0 = now();
		for (long c = 0; c < cycles; c++) {
			struct cg_box *cg;
			int rc = cg_create(name, getpid(), &req, &cg);
			if (rc)
				return rc;
			cg_destroy(cg);
		}
		printf("%.1f us per create+destroy (%ld cycles)\n", (now() - t0) * 1e6 / (double)cycles,
		       cycles);
		return 0;
	}

	struct cg_box *cg;
	int rc = open_only ? cg_open(name, getpid(), &req, &cg) : cg_create(name, getpid(), &req, &cg);
	if (rc)
		return rc;
	if (show_only || print_record) {
		show(cg);
		if (show_only) {
			cg_destroy(cg);
			return 0;
		}
	}
	if (i + 1 >= argc) {
		cg_destroy(cg);
		return usage();
	}

	int oomfd = cg_oom_fd(cg);
	/* As the supervisor does: the child joins the box cgroup itself, the
	 * parent never enters it. */
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
		if (cg_join(cg) < 0) {
			fprintf(stderr, "cg-run: join: %s\n", strerror(errno));
			_exit(125);
		}
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "cg-run: exec %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}

	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int status = 0, oom_killed = 0;
	for (;;) {
		struct pollfd p[2] = {{pfd, POLLIN, 0}, {oomfd, POLLIN, 0}};
		if (poll(p, oomfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		if (oomfd >= 0 && (p[1].revents & POLLIN) && cg_oom_fired(cg)) {
			/* v1 has no group kill: the first OOM kill ends the box. */
			cg_kill_all(cg);
			oom_killed = 1;
		}
		if (p[0].revents & POLLIN) {
			waitpid(pid, &status, 0);
			break;
		}
	}
	int evidence = cg_oom_evidence(cg), byte1 = cg_byte1(cg);
	cg_kill_all(cg);
	cg_destroy(cg);
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + sig;
	if (evidence) {
		sig = 9;
		code = 137;
	}
	if (evidence)
		diag_line(0, "%s", oom_sentence);
	fprintf(stderr, "cg-run: byte1=%d byte2=%d byte3=%d exit=%d%s\n", byte1, evidence, sig, code,
		oom_killed ? " (box killed on the OOM event)" : "");
	return code;
}
