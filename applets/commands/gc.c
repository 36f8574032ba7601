/* kern-gc: remove retired image copies and pull leftovers no box uses */
#include <stddef.h>

#include "base/applet.h"
#include "base/diag.h"
#include "image/gc.h"

static const char usage[] =
"usage: kern gc\n"
"\n"
"Remove what the image cache no longer needs: copies retired by\n"
"`--pull always` (<key>.old-<pid>) that no box record names, copies and\n"
"temporary files left by pulls that died (<key>.pull-<pid>, .kern-tmp-*),\n"
"and entries without a sentinel (what a pull that died had written) whose\n"
"pull lock is free.\n"
"Complete entries and anything a live box uses are never touched.\n";

static int gc_main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		die("image", "kern gc takes no arguments");
	image_gc();
	return 0;
}

APPLET(gc, "remove retired image copies and pull leftovers no box uses", usage, gc_main);
