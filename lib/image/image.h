/* Images for `kern box --image REF` (isolation.md §11-12, box-cli.md §9,
 * §10): reference checks, and resolution through the cache, pulling per
 * the policy. The built-in `host` image is the box's business, not this. */
#ifndef KERN_IMAGE_H
#define KERN_IMAGE_H

#include <stddef.h>

/* PULL_PLAN: as PULL_NEVER, for `kern box --plan`, which never pulls. */
enum pull_policy { PULL_MISSING, PULL_NEVER, PULL_ALWAYS, PULL_PLAN };

/* What the box takes from the image config (the .image sidecar). Arrays
 * are NULL-terminated; entrypoint/cmd are NULL when the image has none. */
struct image_config {
	char **entrypoint;
	char **cmd;
	char **env;
	char *workdir;		/* "" when unset */
	char *user;		/* "" when unset */
	char digest[80];
};

/* box-cli.md §9.2. Returns 0, or -1 with *why for the error line
 * `error: image: bad image reference '<ref>': <why>`. */
int image_ref_check(const char *ref, const char **why);

/* --platform: "os/arch" or "arch" -> canonical arch ("amd64", "arm64");
 * -1 for a non-linux os or an unknown arch. */
int image_platform(const char *s, char *arch, size_t len);

/* Resolve ref through the cache, pulling under the per-image lock per
 * policy. On success rootfs holds the flat rootfs directory (<key>/) and
 * cfg the image config. Returns 0, or -1 after printing the error line
 * (`error: image|pull|registry|manifest: ...`, box-cli.md §6.2): the
 * caller ends with die_reported(), exit 1. */
int image_resolve(const char *ref, int policy, const char *arch, char *rootfs, size_t len,
		  struct image_config *cfg);
void image_config_free(struct image_config *cfg);

#endif
