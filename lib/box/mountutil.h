/* Mount helpers for kern-fs: every source and target is an O_PATH
 * descriptor reached without following symlinks, and mounts are made
 * through /proc/self/fd/N so nothing can be swapped in between. */
#ifndef KERN_MOUNTUTIL_H
#define KERN_MOUNTUTIL_H

#include <stddef.h>

/* "/proc/self/fd/N" into buf. */
const char *fd_path(int fd, char *buf, size_t len);

/* Remount the mount at path with MS_BIND and flags added to the flags
 * the kernel locks (a user namespace may not drop them: EPERM). */
int remount_bind(const char *path, unsigned long flags);

/* Remount the mount at path read-only, keeping its locked flags. */
int remount_ro(const char *path, unsigned long extra);

/* A fresh tmpfs (opts: "key=value,..."; flags: MS_RDONLY, MS_NOSUID,
 * MS_NODEV, MS_NOEXEC)
 * attached on the directory behind dirfd, made with the new mount API so
 * that no path is walked on either side: the returned descriptor is the
 * root of that very tmpfs, whatever the name of dirfd's directory becomes
 * later. Returns the descriptor, or -1 with errno and *what naming the
 * failing call. */
int tmpfs_at(int dirfd, const char *opts, unsigned long flags, const char **what);
/* Create the target of a bind inside the box root: parents with mode
 * 0755 (no symlink, no `..`), the last component as a directory or an
 * empty file to match the source. Returns an O_PATH descriptor. */
int make_target(int rootfd, const char *dst, int is_dir);

#endif
