/* kern-wait: supervise the box: PID 1, deadline, reaping, outcome bytes */
#include "applet.h"

static const char usage[] =
"usage: kern-wait --name NAME [--timeout N] -- NEXT...\n";

static int wait_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("wait");
}

APPLET(wait, "supervise the box: PID 1, deadline, reaping, outcome bytes", usage, wait_main);
