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
#include "base/selfexec.h"
#include "cgroup/cgroup.h"
#include "steps/steps.h"

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

static int cg_main(int argc, char **argv)
{
	struct cg_step c = cg_step_defaults;
	struct cg_limits *req = &c.limits;
	struct cg_box *cg;

	/* The next step runs from kern's own image, opened before anything. */
	(void)self_exe_fd();
	int i = step_args(&cg_step_flags, argc, argv, &c);
	if (i >= argc - 1)
		step_die(&cg_step_flags, "nothing to run after `--`");
	if (env_get("KERN_REQUIRE_LIMITS"))
		req->require_limits = 1;
	if (env_get("KERN_ALLOW_UNCAPPED"))
		req->allow_uncapped = 1;
	if (env_get("KERN_NO_SCOPE"))
		req->no_scope = 1;
	if (req->require_limits && req->allow_uncapped)
		step_die(&cg_step_flags, "--require-limits and --allow-uncapped are mutually exclusive");
	if (cg_create(c.name, getpid(), req, &cg) < 0)
		return EXIT_SETUP;
	char **next = argv + i + 1;
	cg_close(cg);
	exec_next(next);
	int saved = errno;
	/* Nothing will supervise it: take the cgroup back down. */
	if (cg_open(c.name, getpid(), NULL, &cg) == 0)
		cg_destroy(cg);
	errno = saved;
	step_die_setup_errno(&cg_step_flags, "exec %s", next[0]);
}

APPLET(cg, "create the box cgroup and apply memory, pids and cpu caps", usage, cg_main);
