/* What unpack_stage leaves for unpack_commit inside the staging
 * directory <rootfs>/.kern-stg-<index>-<hex>: the extracted tree with its
 * final modes, and a record file .kern-layer (no member can use a
 * top-level .kern- name) listing, as NUL-terminated strings each led by
 * one tag byte:
 *   'O' <dir>    an opaque directory (.wh..wh..opq), "" = the root
 *   'W' <path>   a whiteout target
 *   'I' <dir>    a directory made only as a parent of other members
 * Whiteouts are never materialised as files. */
#ifndef KERN_LAYER_STAGING_H
#define KERN_LAYER_STAGING_H

#include <stddef.h>

#define STAGING_RECORDS ".kern-layer"
#define STAGING_NAME_MAX 96

/* <out> = ".kern-stg-<index>-<hex>"; -1 with why for a bad index or a
 * hex that is not 64 lowercase hex digits. */
int staging_name(int index, const char *hex, char *out, size_t len, char *why, size_t whylen);

#endif
