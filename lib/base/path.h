/* Path checks and walks that never follow a symlink. Every path that comes
 * from outside (bind sources and targets, layer members, cache entries) goes
 * through here. */
#ifndef KERN_PATH_H
#define KERN_PATH_H

#include <stddef.h>
#include <sys/types.h>

/* Absolute, no NUL/newline (by construction), no `.` or `..` component. */
int path_is_clean_abs(const char *p);
/* The next component of the writable path *rest (slashes skipped), cut
 * off in place with a NUL; *rest moves past it. NULL at the end. */
char *path_next_component(char **rest);
/* Copy p to out collapsing repeated slashes and dropping a trailing one
 * ("//dev/" -> "/dev"). */
int path_collapse(const char *p, char *out, size_t len);
/* 1 if a equals b or lies below it (both collapsed absolute paths). */
int path_is_under(const char *a, const char *b);

/* realpath() of path into real, or path itself when it does not resolve
 * (*resolved says which); then the identities (device and inode) of real
 * and of each of its ancestors below / that can be stat'ed, nearest first,
 * at most max; *self: the first is real's own. Returns how many. A clean
 * absolute path with no symlink on it costs one lstat() per component,
 * which answers both; any other path, realpath() and a stat() each. */
int path_ancestry(const char *path, char *real, size_t len, dev_t *dev, ino_t *ino, int max,
		  int *self, int *resolved);

/* Open rel beneath dirfd without following any symlink and without leaving
 * dirfd: openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS),
 * or a per-component O_NOFOLLOW walk where openat2 is missing. A `..`
 * component fails with EXDEV/ELOOP either way. flags are open(2) flags;
 * O_NOFOLLOW is implied for the last component. */
int open_beneath(int dirfd, const char *rel, int flags, mode_t mode);

/* Walk an absolute host path from / with no symlink anywhere on it (ELOOP)
 * and no ".." (EXDEV), and return an O_PATH descriptor of the final
 * object: openat2(RESOLVE_NO_SYMLINKS), or one component at a time with
 * O_PATH|O_NOFOLLOW on a kernel without it. */
int open_nofollow_abs(const char *abs);
/* fd (an O_PATH|O_NOFOLLOW descriptor, or -1 passed through) unless it is
 * a symlink itself: then it is closed, and -1 with ELOOP. */
int fd_not_symlink(int fd);

/* Walk rel beneath dirfd, creating missing directories with mode; every
 * existing component must be a real directory (ELOOP for a symlink,
 * ENOTDIR otherwise). Returns an O_PATH|O_DIRECTORY descriptor. */
int mkdir_beneath(int dirfd, const char *rel, mode_t mode);

#endif
