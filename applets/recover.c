/* kern-recover: reclaim what dead boxes left behind */
#include "applet.h"

static const char usage[] =
"usage: kern recover\n";

static int recover_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("recover");
}

APPLET(recover, "reclaim what dead boxes left behind", usage, recover_main);
