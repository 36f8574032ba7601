/* kern-cg: create the box cgroup, apply and read back its caps, then exec
 * the rest of argv (the same process continues as the supervisor). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "applet.h"
#include "cgroup.h"
#include "diag.h"
#include "env.h"
#include "parse.h"
#include "registry.h"
#include "selfexec.h"

static const char usage[] =
	"usage: kern-cg --name NAME [--memory SIZE] [--pids-limit N] [--cpus C]\n"
	"               [--require-limits | --allow-uncapped] -- NEXT...\n"
	"\n"
	"Create kern-box-NAME-<pid> for this process (the supervisor-to-be), write\n"
	"and read back memory (default 512m, swap 0), pids (default 512) and cpu,\n"
	"print the notices when caps cannot be placed, then exec NEXT.\n"
	"Exit 125 when --require-limits cannot be met.\n";

static int cg_main(int argc, char **argv)
{
	struct cg_limits lim = {0};
	struct cg_box *cg;
	const char *name = NULL, *f = NULL;
	uint64_t u;
	unsigned long long ull;
	int next = split_dashdash(argc, argv), rc;

	if (next < 0 || next >= argc) {
		fatal("box", "kern-cg: missing `-- NEXT...`");
		return EXIT_CLI;
	}
	for (int i = 1; i < next - 1; i++) {
		f = argv[i];
		if (!strcmp(f, "--require-limits")) {
			lim.require_limits = 1;
			continue;
		}
		if (!strcmp(f, "--allow-uncapped")) {
			lim.allow_uncapped = 1;
			continue;
		}
		const char *v = i + 1 < next - 1 ? argv[++i] : NULL;
		if (!v)
			goto bad;
		if (!strcmp(f, "--name") && box_name_valid(v))
			name = v;
		else if (!strcmp(f, "--memory") && parse_size(v, 0, &u) == 0)
			lim.memory = u, lim.memory_given = 1;
		else if (!strcmp(f, "--pids-limit") && parse_u64(v, &ull) == 0 && ull > 0)
			lim.pids = ull, lim.pids_given = 1;
		else if (!strcmp(f, "--cpus") && parse_cpus(v, &u) == 0)
			lim.cpu_micro = u;
		else
			goto bad;
	}
	if (!name) {
		fatal("box", "kern-cg: --name is required");
		return EXIT_CLI;
	}
	if (env_get("KERN_NO_SCOPE"))
		lim.no_scope = 1;
	if ((rc = cg_create(name, getpid(), &lim, &cg)))
		return rc;
	cg_close(cg);
	exec_next(argv + next);
	setup_failed("kern-cg: exec %s: %m", argv[next]);
	return EXIT_SETUP;
bad:
	fatal("box", "kern-cg: bad or unknown flag '%s' (or a bad value for it)", f ? f : "");
	return EXIT_CLI;
}

APPLET(cg, "create the box cgroup and apply memory, pids and cpu caps", usage, cg_main);
