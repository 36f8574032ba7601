/* A kern.toml [[vdisk]] with backend = "disk" (box-cli.md §2.3): an ext4
 * filesystem on a loop device over a sparse file under the runtime
 * directory, private to one box and gone with it.
 *
 * Who makes it: ext4 cannot be mounted from a user namespace, and a
 * root caller's box root is a subordinate id in one (ns.h, issue 17). So
 * the supervisor, host root in the host's namespaces, makes the whole disk
 * on PID 1's request over the start socket that already carries its
 * idmapped mounts (idmount.h), and sends back a detached mount; PID 1
 * attaches it at the vdisk's path in its own mount namespace.
 *
 * Nothing outlives the box, whatever kills it: the file has no name from
 * the start (O_TMPFILE; where a filesystem lacks that, it is unlinked as
 * soon as it is made), the loop device clears itself when its last user
 * goes (LO_FLAGS_AUTOCLEAR), and the only mount lives in the box's mount
 * namespace. When that namespace dies the filesystem is unmounted, the
 * loop device lets the file go and the file's blocks are freed. */
#ifndef KERN_VDISK_H
#define KERN_VDISK_H

#include <stdint.h>

/* The smallest and largest disk a kern.toml may ask for: mke2fs needs
 * room for its metadata; ext4 with 4 KiB blocks keeps files up to 16 TiB,
 * the sparse file included. */
#define VDISK_MIN (1ULL << 20)
#define VDISK_MAX (16ULL << 40)

/* The supervisor's side: make a disk of size bytes (VDISK_MIN..VDISK_MAX,
 * and no more than dir's filesystem has free) in dir, formatted by
 * e2fsprogs' mke2fs with its root directory owned by uid:gid, mode 1777,
 * as a vdisk tmpfs is. Returns the detached mount (fsmount: nosuid,
 * nodev, like a vdisk tmpfs), or -1 with errno and *what naming the step
 * and path (a static buffer). */
int vdisk_make(const char *dir, uint64_t size, unsigned long uid, unsigned long gid,
	       const char **what);

/* PID 1's side, for kern-fs: the disk of size bytes for the vdisk at path,
 * attached on the directory behind dstfd. In a shifted box (idm_fd >= 0)
 * the supervisor makes it; otherwise PID 1 tries itself, which works only
 * with host root's own privileges (dir: where the file goes). Any failure
 * ends PID 1 with `kern: sandbox setup failed: vdisk PATH: ...` (125). */
void vdisk_attach(int idm_fd, const char *dir, const char *path, uint64_t size, int dstfd);

#endif
