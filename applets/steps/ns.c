/* kern-ns: create the box's user, pid, uts, ipc and network namespaces and
 * write the id maps, then exec the rest of argv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/selfexec.h"
#include "box/ns.h"
#include "steps/steps.h"

static const char usage[] =
	"usage: kern-ns [--net] [--uid-range | --uid-range-if-available] [--map-host-root]\n"
	"               [--no-userns] [--egress-fd N] -- NEXT...\n"
	"\n"
	"Unshare the user, pid, uts and ipc namespaces, and the network namespace\n"
	"unless --net (keep the host network), write the id maps, then exec NEXT in\n"
	"this same process: its next child becomes PID 1 of the new pid namespace.\n"
	"\n"
	"  --net                      keep the host network namespace\n"
	"  --uid-range                map 0 -> you plus your /etc/subuid range (warn if\n"
	"                             it cannot be had; then a single-id map)\n"
	"  --uid-range-if-available   the same, silently\n"
	"  --map-host-root            as root: box root is host root (see below)\n"
	"  --no-userns                root only: no user namespace and no maps, for\n"
	"                             kernels that refuse one (kern box --userns=no);\n"
	"                             NEXT must be kern-wait --no-userns\n"
	"  --egress-fd N              the kern-egress control descriptor: the box's\n"
	"                             127.0.0.1:3128 listener is handed to the proxy\n"
	"\n"
	"Default map: `0 <your uid> 1` with setgroups denied. Exit 125 when the\n"
	"namespaces cannot be created (unprivileged user namespaces restricted).\n"
	"NEXT gets KERN_NS_MAP=range|single|single-asked|single-silent, the map\n"
	"written, for kern-wait (which removes it before the box starts).\n"
	"\n"
	"Root without --map-host-root: box root is a subordinate id (root's\n"
	"/etc/subuid row, else 2130706432), which this process, the supervisor to\n"
	"be, must not become. kern-ns then creates nothing: it passes the\n"
	"namespaces on in KERN_NS_DEFER, and kern-wait clones PID 1 into them,\n"
	"writes its maps and idmaps its binds from outside, as kern box does.\n"
	"NEXT must then be kern-wait (exit 125 otherwise: nothing would be boxed).\n";

/* NEXT is kern-wait: `kern-wait ...` or `kern wait ...`, by any path. */
static int next_is_wait(char **next)
{
	const char *a = kern_applet_of(next[0]);
	return a && (!strcmp(a, "wait") || (!*a && next[1] && !strcmp(next[1], "wait")));
}

static int ns_main(int argc, char **argv)
{
	struct ns_step st = ns_step_defaults;
	struct ns_config cfg = {.uid = geteuid(), .gid = getegid()};
	int ranged, next = step_args(&ns_step_flags, argc, argv, &st) + 1;

	if (next >= argc)
		step_die(&ns_step_flags, "missing `-- NEXT...`");
	ns_step_config(&st, &cfg);
	int egress_fd = st.egress_fd;
	if (cfg.no_userns && geteuid() != 0)
		die("box", "kern-ns: --no-userns needs root (box root would be the caller)");
	if (cfg.no_userns && (cfg.range || cfg.host_root))
		die("box", "kern-ns: --no-userns maps no ids: --uid-range and --map-host-root do not apply");
	if (ns_shifted(&cfg)) {
		/* Deferred namespaces exist only if kern-wait comes next: any
		 * other NEXT would run on the host's namespaces. Fail closed. */
		if (!next_is_wait(argv + next))
			step_die_setup(&ns_step_flags, "as root, box root is a subordinate id and the box's namespaces "
				       "are made by kern-wait, which must come next (not '%.64s'); "
				       "--map-host-root has kern-ns make them itself",
				       argv[next]);
		char v[64];
		snprintf(v, sizeof v, "%d,%d,%d,%d", cfg.net_host, cfg.range, cfg.range_explicit,
			 egress_fd);
		setenv(NS_DEFER_ENV, v, 1);
		exec_next(argv + next);
		step_die_setup_errno(&ns_step_flags, "exec %s", argv[next]);
	}
	/* Made here: kern-wait must not defer again. */
	unsetenv(NS_DEFER_ENV);
	if (ns_enter(&cfg, egress_fd, &ranged) < 0)
		return EXIT_SETUP;
	setenv(NS_MAP_ENV, cfg.no_userns ? "none" : ranged ? "range" : !cfg.range ? "single" :
			   cfg.range_explicit ? "single-asked" : "single-silent", 1);
	exec_next(argv + next);
	step_die_setup_errno(&ns_step_flags, "exec %s", argv[next]);
}

APPLET(ns, "create user, pid, uts, ipc and net namespaces and id maps", usage, ns_main);
