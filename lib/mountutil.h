/* Mount helpers for kern-fs: every source and target is an O_PATH
 * descriptor reached without following symlinks, and mounts are made
 * through /proc/self/fd/N so nothing can be swapped in between. */
#ifndef KERN_MOUNTUTIL_H
#define KERN_MOUNTUTIL_H

#include <stddef.h>

/* "/proc/self/fd/N" into buf. */
const char *fd_path(int fd, char *buf, size_t len);

/* Bind the object behind srcfd onto the object behind dstfd,
 * non-recursively (recursively only when the kernel refuses a partial
 * view of locked submounts), then remount with nosuid,nodev (+ro) and the
 * source's locked flags (the remount goes through dstpath, the same
 * object). Returns 0 or -1 with errno; *what names the
 * failing call. */
int bind_fd(int srcfd, int dstfd, const char *dstpath, int ro, const char **what);

/* Remount the mount at path read-only, keeping its locked flags. */
int remount_ro(const char *path, unsigned long extra);

/* Create the target of a bind inside the box root: parents with mode
 * 0755 (no symlink, no `..`), the last component as a directory or an
 * empty file to match the source. Returns an O_PATH descriptor. */
int make_target(int rootfd, const char *dst, int is_dir);

#endif
