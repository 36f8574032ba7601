/* kern-load: import an OCI layout or docker-save archive into the cache */
#include "applet.h"

static const char usage[] =
"usage: kern load -i PATH [--tag REF]\n";

static int load_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("load");
}

APPLET(load, "import an OCI layout or docker-save archive into the cache", usage, load_main);
