/* kern-unpack: extract one image layer into a directory, vetting every member */
#include "applet.h"

static const char usage[] =
"usage: kern-unpack LAYER DIR [-- NEXT...]\n";

static int unpack_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("unpack");
}

APPLET(unpack, "extract one image layer into a directory, vetting every member", usage, unpack_main);
