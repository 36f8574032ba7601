/* kern-pull: fetch an image from an OCI registry into the cache */
#include "applet.h"

static const char usage[] =
"usage: kern pull [--platform OS/ARCH] IMAGE\n"
	"       kern-pull [--platform OS/ARCH] IMAGE [-- NEXT...]\n";

static int pull_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("pull");
}

APPLET(pull, "fetch an image from an OCI registry into the cache", usage, pull_main);
