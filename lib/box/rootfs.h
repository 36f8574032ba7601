/* kern-fs: PID 1 builds the box root (isolation.md §2.6 steps 16-27, §4). */
#ifndef KERN_ROOTFS_H
#define KERN_ROOTFS_H

#include "box/box.h"

/* Steps 17-27 in the calling process (PID 1 of the box, in its user and
 * pid namespaces). Every failure ends the process through die_setup()
 * (125); on return the process is chrooted in the new root with cwd at
 * the workdir. */
void fs_build(const struct fs_config *cfg);

/* A shifted box: ask the supervisor now for every host tree fs_build will
 * take (it asks itself if not asked before). */
void fs_prefetch(const struct fs_config *cfg);

/* The /proc entries every box masks (isolation.md §4.3), NULL-terminated,
 * names below /proc: made read-only (rootfs_proc_ro, /proc/sys first),
 * hidden behind the null device, hidden behind an empty tmpfs. */
extern const char *const rootfs_proc_ro[], *const rootfs_proc_null[], *const rootfs_proc_empty[];
extern const char *const rootfs_sys_empty[];

/* --image host, in a shifted box: ask the supervisor for the trees
 * host_image_populate() will bind (idm_prefetch). */
void host_image_prefetch(const struct fs_config *cfg);
/* --image host: fill the tmpfs root behind rootfd (box-cli.md §2.7). */
void host_image_populate(int rootfd, const char *root, const struct fs_config *cfg);

#endif
