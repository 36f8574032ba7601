/* The image cache of box-cli.md §10 and isolation.md §12.2: one entry per
 * reference key, `<key>/` (flat rootfs), `<key>.ok` (written last),
 * `<key>.image` (config sidecar) and `<key>.lock` (flock). Every entry
 * file is opened no-follow and must belong to the caller. */
#ifndef KERN_IMGCACHE_H
#define KERN_IMGCACHE_H

#include <stddef.h>
#include <time.h>

struct cache {
	int root_fd;		/* the images directory */
	char root[4096];
	char key[320];
};

enum entry_state {
	ENTRY_COMPLETE,
	ENTRY_ABSENT,		/* nothing cached */
	ENTRY_NO_ROOTFS,	/* sidecars without a usable rootfs (or leftovers) */
	ENTRY_NO_CONFIG,	/* rootfs without its config sidecar */
	ENTRY_UNSAFE,		/* a symlink or foreign-owned file: refused */
};

/* Open the cache root (creating it 0700 when create) and derive ref's key.
 * Returns 0, or -1 after printing the error line. */
int cache_open(struct cache *c, const char *ref, int create);
void cache_close(struct cache *c);

/* Completeness by the rule of box-cli.md §10 (cache layout); *what names
 * an unsafe file. */
enum entry_state cache_state(const struct cache *c, const char **what);

/* Take the per-image lock (blocking); the fd is the lock. Returns -1
 * after printing the error line. */
int cache_lock(const struct cache *c);

/* "<key><suffix>" into out. */
void cache_name(const struct cache *c, const char *suffix, char *out, size_t len);

/* Write data to name in the cache root atomically: temp name, fsync,
 * rename, fsync of the directory. Returns 0 or -1 with errno. */
int cache_write_file(const struct cache *c, const char *name, const void *data, size_t len);

/* Read a whole small entry file (no-follow, owned by the caller, at most
 * max bytes) into a malloc'd buffer. */
char *cache_read_file(const struct cache *c, const char *name, size_t max, size_t *len);

/* 1 if a live box uses path as its overlay lower: its record names path,
 * or (for a copy retired from the entry path at retired_at) names entry
 * and was created no later than the retirement. */
int cache_path_in_use(const char *path, const char *entry, time_t retired_at);

#endif
