/* kern-fs: build the box root: overlay, /dev, binds, tmpfs, pivot_root, /proc */
#include "applet.h"

static const char usage[] =
"usage: kern-fs --rootfs DIR [options] -- NEXT...\n";

static int fs_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_not_built("fs");
}

APPLET(fs, "build the box root: overlay, /dev, binds, tmpfs, pivot_root, /proc", usage, fs_main);
