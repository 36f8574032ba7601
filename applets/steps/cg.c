/* kern-cg: create the box cgroup and apply memory, pids and cpu caps
 * (isolation.md §2.2 step 7), then exec the rest of argv as the same pid,
 * which goes on to be the supervisor and finds the cgroup with cg_open(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/parse.h"
#include "base/selfexec.h"
#include "cgroup/cgroup.h"

static const char usage[] =
"usage: kern-cg --name NAME [--memory SIZE] [--pids-limit N] [--cpus C]\n"
"               [--cpuset LIST] [--require-limits | --allow-uncapped] -- NEXT...\n"
"\n"
"Create kern-box-NAME-<pid> in every cgroup hierarchy kern can use here,\n"
"write the caps and read them back, then exec NEXT as this same pid.\n"
"\n"
"  --name NAME         box name ([A-Za-z0-9][A-Za-z0-9_.-]*, at most 64 bytes)\n"
"  -m, --memory SIZE   memory cap, swap 0 (bytes or <n>b|k|m|g; default 512m)\n"
"  --pids-limit N      task cap (default 512)\n"
"  --cpus C            CPU bandwidth, e.g. 0.5 or 2 (default uncapped)\n"
"  --cpuset LIST       cpus the box may run on, e.g. 0-1,3\n"
"  --require-limits    exit 125 unless the memory and pids caps are in force\n"
"  --allow-uncapped    run uncapped without the warnings\n"
"\n"
"KERN_REQUIRE_LIMITS, KERN_ALLOW_UNCAPPED and KERN_NO_SCOPE are read too.\n";

/* --flag VALUE or --flag=VALUE: 1 with *val set when argv[*i] is flag. */
static int take(int argc, char **argv, int *i, const char *flag, const char **val)
{
	size_t n = strlen(flag);
	const char *a = argv[*i];
	if (!a || strncmp(a, flag, n) != 0 || (a[n] && a[n] != '='))
		return 0;
	if (a[n] == '=')
		*val = a + n + 1;
	else
		*val = *i + 1 < argc && argv[*i + 1] ? argv[++*i] : "";
	return 1;
}

static int cpulist_ok(const char *s)
{
	int digits = 0;
	if (!*s || strlen(s) > 200)
		return 0;
	for (const char *p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if ((*p == ',' || *p == '-') && digits)
			digits = 0;
		else
			return 0;
	}
	return digits > 0;
}

static int bad(const char *what, const char *v)
{
	fatal("box", "kern-cg: invalid %s '%s'", what, v);
	return EXIT_CLI;
}

static int cg_main(int argc, char **argv)
{
	struct cg_limits req = {0};
	const char *name = NULL, *v;
	struct cg_box *cg;
	uint64_t u;
	unsigned long long n;
	int i, rc;

	/* The next step runs from kern's own image, opened before anything. */
	(void)self_exe_fd();
	for (i = 1; i < argc && argv[i] && strcmp(argv[i], "--") != 0; i++) {
		if (take(argc, argv, &i, "--name", &v))
			name = v;
		else if (take(argc, argv, &i, "--memory", &v) ||
			 take(argc, argv, &i, "-m", &v)) {
			if (parse_size(v, 0, &u) < 0 || u == 0)
				return bad("--memory", v);
			req.memory = u;
			req.memory_given = 1;
		} else if (take(argc, argv, &i, "--pids-limit", &v)) {
			if (parse_u64(v, &n) < 0 || n < 1 || n > 4194304)
				return bad("--pids-limit", v);
			req.pids = n;
			req.pids_given = 1;
		} else if (take(argc, argv, &i, "--cpus", &v)) {
			if (parse_cpus(v, &u) < 0)
				return bad("--cpus", v);
			req.cpu_micro = u;
		} else if (take(argc, argv, &i, "--cpuset", &v)) {
			if (!cpulist_ok(v))
				return bad("--cpuset", v);
			req.cpuset = v;
		} else if (strcmp(argv[i], "--require-limits") == 0)
			req.require_limits = 1;
		else if (strcmp(argv[i], "--allow-uncapped") == 0)
			req.allow_uncapped = 1;
		else {
			fatal("box", "kern-cg: unknown flag '%s'", argv[i]);
			return EXIT_CLI;
		}
	}
	if (!name) {
		fatal("box", "kern-cg: --name is required");
		return EXIT_CLI;
	}
	if (i >= argc - 1) {
		fatal("box", "kern-cg: nothing to run after `--`");
		return EXIT_CLI;
	}
	if (env_get("KERN_REQUIRE_LIMITS"))
		req.require_limits = 1;
	if (env_get("KERN_ALLOW_UNCAPPED"))
		req.allow_uncapped = 1;
	if (env_get("KERN_NO_SCOPE"))
		req.no_scope = 1;
	if (req.require_limits && req.allow_uncapped) {
		fatal("box", "--require-limits and --allow-uncapped are mutually exclusive");
		return EXIT_CLI;
	}
	rc = cg_create(name, getpid(), &req, &cg);
	if (rc != 0)
		return rc;
	char **next = argv + i + 1;
	cg_close(cg);
	exec_next(next);
	int saved = errno;
	/* Nothing will supervise it: take the cgroup back down. */
	if (cg_open(name, getpid(), NULL, &cg) == 0)
		cg_destroy(cg);
	setup_failed("exec %s: %s", next[0], strerror(saved));
	return EXIT_SETUP;
}

APPLET(cg, "create the box cgroup and apply memory, pids and cpu caps", usage, cg_main);
