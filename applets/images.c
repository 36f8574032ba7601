/* kern-images: list cached images */
#include "applet.h"

static const char usage[] =
"usage: kern images\n";

static int images_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("images");
}

APPLET(images, "list cached images", usage, images_main);
