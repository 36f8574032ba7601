/* kern-rmi: remove a cached image */
#include "applet.h"

static const char usage[] =
"usage: kern rmi REF\n";

static int rmi_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("rmi");
}

APPLET(rmi, "remove a cached image", usage, rmi_main);
