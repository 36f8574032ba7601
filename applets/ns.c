/* kern-ns: create user, pid, uts, ipc and net namespaces and id maps */
#include "applet.h"

static const char usage[] =
"usage: kern-ns [--net] [--uid-range] -- NEXT...\n";

static int ns_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("ns");
}

APPLET(ns, "create user, pid, uts, ipc and net namespaces and id maps", usage, ns_main);
