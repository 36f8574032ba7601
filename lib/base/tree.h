/* Directory-tree operations that never follow a symlink and work for the
 * owner of a tree whose directories are read-only or closed (a rootless
 * pull owns every file but has no CAP_DAC_OVERRIDE). */
#ifndef KERN_TREE_H
#define KERN_TREE_H

#include <sys/types.h>

/* open_beneath(base, path, flags), also for paths longer than PATH_MAX
 * (walked one O_NOFOLLOW component at a time). */
int tree_open(int base, const char *path, int flags);

/* chmod name in dirfd; a symlink there is an error (ELOOP), never
 * followed. */
int tree_chmod(int dirfd, const char *name, mode_t mode);

/* Remove name in dirfd, no-follow: a non-directory (a symlink too) is
 * unlinked; a directory is emptied by an iterative post-order walk that
 * never descends a symlink and grants itself u+rwx on every directory
 * it enters. 0 also when name does not exist. */
int tree_rm_at(int dirfd, const char *name);

/* Remove every child of the directory dirfd (opened O_RDONLY) for which
 * keep(name) is 0. */
int tree_rm_children(int dirfd, int (*keep)(const char *name));

#endif
