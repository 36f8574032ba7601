/* kern-egress: start the allowlist HTTP(S) proxy for the box */
#include "applet.h"

static const char usage[] =
"usage: kern-egress --allow D1,D2,... -- NEXT...\n";

static int egress_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("egress");
}

APPLET(egress, "start the allowlist HTTP(S) proxy for the box", usage, egress_main);
