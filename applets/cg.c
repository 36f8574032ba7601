/* kern-cg: create the box cgroup and apply memory, pids and cpu caps */
#include "applet.h"

static const char usage[] =
"usage: kern-cg --name NAME [--memory SIZE] [--pids-limit N] [--cpus C] -- NEXT...\n";

static int cg_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("cg");
}

APPLET(cg, "create the box cgroup and apply memory, pids and cpu caps", usage, cg_main);
