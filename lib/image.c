/* Placeholder until kern-pull lands: no registry images yet. */
#include <string.h>

#include "diag.h"
#include "image.h"

int image_ref_check(const char *ref, const char **why)
{
	if (!ref || !*ref) {
		*why = "empty reference";
		return -1;
	}
	return 0;
}

int image_platform(const char *s, char *arch, size_t len)
{
	(void)s; (void)arch; (void)len;
	return -1;
}

int image_resolve(const char *ref, int policy, const char *arch, char *rootfs, size_t len,
		  struct image_config *cfg)
{
	(void)policy; (void)arch; (void)rootfs; (void)len;
	memset(cfg, 0, sizeof *cfg);
	fatal("image", "cannot use image '%s': registry images are not built yet in this kern (use --image host or --rootfs DIR)", ref);
	return EXIT_CLI;
}

void image_config_free(struct image_config *cfg)
{
	(void)cfg;
}
