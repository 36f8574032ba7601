/* Putting an image into the cache from somewhere other than its registry
 * (`kern load`): the same entry rules as a pull, built beside the entry and
 * swapped in so running boxes keep their lower. */
#ifndef KERN_IMGSTORE_H
#define KERN_IMGSTORE_H

#include <stddef.h>

/* Fill rootfs_fd and render the sidecar; 0, or 1 after the error line. */
typedef int (*image_fetch_fn)(void *ctx, int rootfs_fd, char **sidecar, size_t *slen);

/* Store the image fetch produces under ref's key. 0, or -1 after the
 * error line. */
int image_import(const char *ref, image_fetch_fn fetch, void *ctx);

#endif
