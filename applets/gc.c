/* kern-gc: remove retired image copies and staging no box uses */
#include "applet.h"

static const char usage[] =
"usage: kern gc\n";

static int gc_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("gc");
}

APPLET(gc, "remove retired image copies and staging no box uses", usage, gc_main);
