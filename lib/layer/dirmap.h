/* What the extractor knows about each directory it made in staging: the
 * mode and mtime its member asked for, or that it was only implied as a
 * parent of another member. Keyed by the cleaned member path. */
#ifndef KERN_DIRMAP_H
#define KERN_DIRMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dir_info {
	mode_t mode;		/* permission bits incl. setgid and sticky */
	int64_t sec;		/* mtime */
	long nsec;
	int mtime_set;
	int implicit;		/* created only as a parent; no member of its own */
};

struct dirmap;

struct dirmap *dirmap_new(void);
void dirmap_free(struct dirmap *m);
struct dir_info *dirmap_get(const struct dirmap *m, const char *path);
/* The entry for path, created zeroed when missing; NULL without memory. */
struct dir_info *dirmap_put(struct dirmap *m, const char *path);
/* Forget path and everything below it (a directory was replaced). */
void dirmap_remove_under(struct dirmap *m, const char *path);
/* Iterate: *it starts at 0; returns the next path or NULL. */
const char *dirmap_next(const struct dirmap *m, size_t *it, struct dir_info **info);
size_t dirmap_count(const struct dirmap *m);

#endif
