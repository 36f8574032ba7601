/* Fail-closed stand-ins for lib/unpack.h, weak so the real extractor
 * (the unpack branch) replaces them at link time without a conflict.
 * Delete this file once lib/unpack.c is on main. */
#include <stdio.h>

#include "unpack.h"

__attribute__((weak)) const struct unpack_limits unpack_default_limits = {
	2ULL << 30, 2ULL << 30, 2000000};

__attribute__((weak)) int unpack_stage(const struct layer_reader *r, int rootfs_fd, int index,
				       const char *hex, const struct unpack_limits *lim,
				       unsigned char diff_id[32], char *why, size_t whylen)
{
	(void)r; (void)rootfs_fd; (void)index; (void)hex; (void)lim; (void)diff_id;
	snprintf(why, whylen, "layer extraction is not built into this kern");
	return -1;
}

__attribute__((weak)) int unpack_commit(int rootfs_fd, int index, const char *hex, char *why,
					size_t whylen)
{
	(void)rootfs_fd; (void)index; (void)hex;
	snprintf(why, whylen, "layer extraction is not built into this kern");
	return -1;
}

__attribute__((weak)) void unpack_abort(int rootfs_fd, int index, const char *hex)
{
	(void)rootfs_fd; (void)index; (void)hex;
}
