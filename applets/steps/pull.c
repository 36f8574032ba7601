/* kern-pull: fetch an image from an OCI registry into the cache */
#include <stdio.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/selfexec.h"
#include "image/image.h"
#include "steps/steps.h"

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

static int pull_main(int argc, char **argv)
{
	struct pull_step c = pull_step_defaults;
	char arch[32];
	char **next = NULL;
	int i = step_args(&pull_step_flags, argc, argv, &c);

	if (i < argc)
		next = argv + i + 1;
	if (c.quiet)
		diag_quiet = 1;
	const char *ref = c.ref, *platform = c.platform;
	int policy = c.policy;
	if (!ref) {
		fatal("pull", "no image given");
		die_hint("usage: kern pull [--platform OS/ARCH] IMAGE");
	}
	const char *why;
	if (image_ref_check(ref, &why) < 0)
		die("image", "bad image reference '%s': %s", ref, why);
	if (platform && image_platform(platform, arch, sizeof arch) < 0)
		die("image", "--platform '%s' is not linux/ARCH with a known architecture", platform);
	char rootfs[4096];
	struct image_config cfg;
	if (image_resolve(ref, policy, platform ? arch : NULL, rootfs, sizeof rootfs, &cfg) < 0)
		die_reported();
	image_config_free(&cfg);
	if (next && next[0]) {
		exec_next(next);
		die_errno("pull", "exec %s", next[0]);
	}
	return 0;
}

APPLET(pull, "fetch an image from an OCI registry into the cache", usage, pull_main);
