/* kern-seccomp: drop capabilities, set no_new_privs, install seccomp, run the workload */
#include "applet.h"

static const char usage[] =
"usage: kern-seccomp [options] -- CMD [ARG...]\n";

static int seccomp_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("seccomp");
}

APPLET(seccomp, "drop capabilities, set no_new_privs, install seccomp, run the workload", usage, seccomp_main);
