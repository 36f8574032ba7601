/* kern-ps: list running boxes */
#include "applet.h"

static const char usage[] =
"usage: kern ps [-q] [--filter name=NAME] [--json]\n";

static int ps_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("ps");
}

APPLET(ps, "list running boxes", usage, ps_main);
