/* kern-login: store registry credentials for pulls */
#include "applet.h"

static const char usage[] =
"usage: kern login REGISTRY [-u USER] --password-stdin\n";

static int login_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("login");
}

APPLET(login, "store registry credentials for pulls", usage, login_main);
