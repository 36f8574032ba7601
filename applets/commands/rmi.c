/* kern-rmi: remove a cached image */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/rmtree.h"
#include "image/cache.h"
#include "image/image.h"

static const char usage[] =
"usage: kern rmi REF\n"
"\n"
"Remove the cache entry of REF (the reference as it was pulled): its\n"
"rootfs, sidecars and lock. Refused while a box uses the image.\n";

static int rmi_main(int argc, char **argv)
{
	const char *why, *what = "";
	struct cache c;
	char path[4500], name[400];
	if (argc != 2)
		die("image", "usage: kern rmi REF");
	const char *ref = argv[1];
	if (image_ref_check(ref, &why) < 0)
		die("image", "bad image reference '%s': %s", ref, why);
	if (cache_open(&c, ref, 0) < 0)
		return EXIT_CLI;
	enum entry_state st = cache_state(&c, &what);
	if (c.root_fd < 0 || st == ENTRY_ABSENT)
		die("image", "no cached image '%s'", ref);
	if (st == ENTRY_UNSAFE)
		die("image", "%s/%s%s is a symlink or not owned by you - refusing", c.root, c.key, what);
	snprintf(path, sizeof path, "%s/%s", c.root, c.key);
	if (cache_path_in_use(path, NULL, 0))
		die("image", "image '%s' is in use by a running box - refusing", ref);
	int lock = cache_lock(&c);
	if (lock < 0) {
		cache_close(&c);
		return EXIT_CLI;
	}
	int rc = 0;
	cache_name(&c, ".ok", name, sizeof name);
	if (unlinkat(c.root_fd, name, 0) < 0 && errno != ENOENT)
		rc = -1;
	cache_name(&c, ".image", name, sizeof name);
	if (rc == 0 && unlinkat(c.root_fd, name, 0) < 0 && errno != ENOENT)
		rc = -1;
	if (rc == 0 && rmtree_at(c.root_fd, c.key) < 0)
		rc = -1;
	if (rc < 0) {
		fatal_errno("image", "cannot remove %s", path);
	} else {
		/* Unlinked while held: a waiter re-checks the path (cache_lock). */
		cache_name(&c, ".lock", name, sizeof name);
		unlinkat(c.root_fd, name, 0);
	}
	close(lock);
	cache_close(&c);
	return rc < 0 ? EXIT_CLI : 0;
}

APPLET(rmi, "remove a cached image", usage, rmi_main);
