/* kern-pull: fetch an image from an OCI registry into the cache */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "image/image.h"

static const char usage[] =
"usage: kern pull [--platform OS/ARCH] [--pull POLICY] IMAGE\n"
"       kern-pull [--platform OS/ARCH] [--pull POLICY] IMAGE [-- NEXT...]\n"
"\n"
"Fetch IMAGE into the image cache, verifying every blob digest and every\n"
"layer diff_id; exit 0 once it is cached (already or now). With `-- NEXT`,\n"
"exec NEXT afterwards.\n"
"\n"
"  --platform OS/ARCH  index entry to use: linux/amd64, linux/arm64, arm64 ...\n"
"                      (default: the host's architecture)\n"
"  --pull POLICY       missing (default): pull unless cached; always: pull\n"
"                      again and swap it in; never: only check the cache\n"
"  -q, --quiet         no notes or warnings (as KERN_QUIET=1)\n"
"\n"
"Environment: KERN_REGISTRY_MIRRORS, KERN_REGISTRY_MIRRORS_ONLY, KERN_QUIET.\n";

/* Chained applets exec the rest of the argv: kern's own applets through
 * /proc/self/exe opened now, never through PATH. */
static int exec_next(char **next)
{
	const char *base = strrchr(next[0], '/');
	base = base ? base + 1 : next[0];
	if (!strchr(next[0], '/') && (strcmp(base, "kern") == 0 || strncmp(base, "kern-", 5) == 0)) {
		int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
		if (self >= 0)
			execveat(self, "", next, environ, AT_EMPTY_PATH);
	} else {
		execvp(next[0], next);
	}
	fatal("pull", "exec %s: %s", next[0], strerror(errno));
	return EXIT_CLI;
}

static int pull_main(int argc, char **argv)
{
	const char *platform = NULL, *ref = NULL;
	char arch[32];
	char **next = NULL;
	int policy = PULL_MISSING;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			next = argv + i + 1;
			break;
		} else if (strcmp(a, "--platform") == 0) {
			if (++i == argc) {
				fatal("pull", "--platform needs a value");
				return EXIT_CLI;
			}
			platform = argv[i];
		} else if (strncmp(a, "--platform=", 11) == 0) {
			platform = a + 11;
		} else if (strcmp(a, "--pull") == 0 || strncmp(a, "--pull=", 7) == 0) {
			const char *v = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : "");
			if (strcmp(v, "missing") == 0)
				policy = PULL_MISSING;
			else if (strcmp(v, "never") == 0)
				policy = PULL_NEVER;
			else if (strcmp(v, "always") == 0)
				policy = PULL_ALWAYS;
			else {
				fatal("pull", "--pull takes missing, never or always, not '%s'", v);
				return EXIT_CLI;
			}
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			diag_quiet = 1;
		} else if (a[0] == '-' && a[1]) {
			fatal("pull", "unknown flag '%s'", a);
			return EXIT_CLI;
		} else if (ref) {
			fatal("pull", "unexpected argument '%s'", a);
			return EXIT_CLI;
		} else {
			ref = a;
		}
	}
	if (!ref) {
		fatal("pull", "no image given");
		hint("usage: kern pull [--platform OS/ARCH] IMAGE");
		return EXIT_CLI;
	}
	const char *why;
	if (image_ref_check(ref, &why) < 0) {
		fatal("image", "bad image reference '%s': %s", ref, why);
		return EXIT_CLI;
	}
	if (platform && image_platform(platform, arch, sizeof arch) < 0) {
		fatal("image", "--platform '%s' is not linux/ARCH with a known architecture", platform);
		return EXIT_CLI;
	}
	char rootfs[4096];
	struct image_config cfg;
	int rc = image_resolve(ref, policy, platform ? arch : NULL, rootfs, sizeof rootfs, &cfg);
	if (rc != 0)
		return rc;
	image_config_free(&cfg);
	if (next && next[0])
		return exec_next(next);
	return 0;
}

APPLET(pull, "fetch an image from an OCI registry into the cache", usage, pull_main);
