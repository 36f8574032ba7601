/* kern-doctor: say what this host can enforce, and how to fix what it cannot */
#include "applet.h"

static const char usage[] =
"usage: kern doctor\n";

static int doctor_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("doctor");
}

APPLET(doctor, "say what this host can enforce, and how to fix what it cannot", usage, doctor_main);
