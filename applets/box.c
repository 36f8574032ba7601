/* kern-box: run a command in a fresh box */
#include "applet.h"

static const char usage[] =
"usage: kern box NAME [flags] [profile tokens] [-- CMD [ARG...]]\n";

static int box_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("box");
}

APPLET(box, "run a command in a fresh box", usage, box_main);
