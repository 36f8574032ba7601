/* The image cache key of box-cli.md §10: clients compute it too, so it is
 * taken over the reference exactly as given. */
#ifndef KERN_CACHEKEY_H
#define KERN_CACHEKEY_H

#include <stddef.h>
#include <stdint.h>

uint64_t fnv1a64(const void *data, size_t len);
/* Write the key of ref into out. Returns 0, or -1 if out is too small. */
int cache_key(const char *ref, char *out, size_t len);

#endif
