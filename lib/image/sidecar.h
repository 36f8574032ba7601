/* The `<key>.image` config sidecar of box-cli.md §10: `key<TAB>value`
 * lines, first `fmt<TAB>3`, values escaped (`\\`, `\t`, `\n`); the same
 * bytes for the same manifest digest. entrypoint and cmd hold a JSON array
 * of strings, or nothing when the image has none. */
#ifndef KERN_SIDECAR_H
#define KERN_SIDECAR_H

#include <stddef.h>

#include "image/image.h"
#include "oci/manifest.h"

/* Render the sidecar into a malloc'd buffer. Returns NULL on ENOMEM. */
char *sidecar_render(const char *digest, const struct image_meta *meta, size_t *len);

/* Parse sidecar bytes into cfg. Returns 0 or -1 (not fmt 3, malformed). */
int sidecar_parse(const char *buf, size_t len, struct image_config *cfg);

#endif
