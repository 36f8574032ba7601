/* kern-exec: run a command inside a running box */
#include "applet.h"

static const char usage[] =
"usage: kern exec NAME [-w DIR] [-u <user>] [-e K=V]... [--env-file PATH] -- CMD [ARG...]\n";

static int exec_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("exec");
}

APPLET(exec, "run a command inside a running box", usage, exec_main);
