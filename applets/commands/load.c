/* kern-load: import an OCI layout or docker-save archive into the cache */
#include <string.h>

#include "base/applet.h"
#include "base/diag.h"
#include "image/image.h"
#include "oci/load.h"

static const char usage[] =
"usage: kern load -i PATH [--tag REF] [--platform OS/ARCH]\n"
"\n"
"Import an image without a registry: PATH is an OCI image layout (a\n"
"directory, or a tar of one) or a `docker save` archive. The image goes\n"
"into the cache under REF (default: the name the archive records) with the\n"
"same digest and diff_id checks, layer vetting and sidecars as a pull.\n";

static int load_main(int argc, char **argv)
{
	const char *path = NULL, *tag = NULL, *platform = NULL;
	char arch[32];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL;
		if (strcmp(a, "-i") == 0 || strcmp(a, "--input") == 0)
			dst = &path;
		else if (strcmp(a, "--tag") == 0 || strcmp(a, "-t") == 0)
			dst = &tag;
		else if (strcmp(a, "--platform") == 0)
			dst = &platform;
		else if (strncmp(a, "--input=", 8) == 0)
			path = a + 8;
		else if (strncmp(a, "--tag=", 6) == 0)
			tag = a + 6;
		else if (strncmp(a, "--platform=", 11) == 0)
			platform = a + 11;
		else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
			diag_quiet = 1;
		else {
			die("image", "kern load: unexpected argument '%s'", a);
		}
		if (dst) {
			if (++i == argc)
				die("image", "kern load: %s needs a value", a);
			*dst = argv[i];
		}
	}
	if (!path)
		die("image", "kern load: -i PATH is required");
	if (platform && image_platform(platform, arch, sizeof arch) < 0)
		die("image", "--platform '%s' is not linux/ARCH with a known architecture", platform);
	return image_load(path, tag, platform ? arch : NULL) < 0 ? EXIT_CLI : 0;
}

APPLET(load, "import an OCI layout or docker-save archive into the cache", usage, load_main);
