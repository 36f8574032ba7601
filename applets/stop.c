/* kern-stop: stop a running box */
#include "applet.h"

static const char usage[] =
"usage: kern stop [--stop-signal SIG] [--stop-timeout N] NAME\n";

static int stop_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("stop");
}

APPLET(stop, "stop a running box", usage, stop_main);
