/* One box's configuration, as `kern box` resolves it from argv, the
 * environment, kern.toml and the image, and as the applet chain carries it
 * step by step. Each step reads only its own part. */
#ifndef KERN_BOX_H
#define KERN_BOX_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "lockdown/lockdown.h"

#define BOX_NAME_MAX 64
#define HOST_NAME_LEN 64

struct bind_spec {
	char *src;		/* absolute host path */
	char *dst;		/* absolute, clean box path */
	int ro;
	int noexec;		/* --mount noexec: no exec on any mount of the tree */
	int must_exist;		/* --mount: a missing source is refused */
};

struct tmpfs_spec {
	char *path;
	uint64_t size;		/* bytes; 0 = unlimited */
	unsigned mode;		/* mode of its root; 0 = 1777 */
	int noexec, strictatime;	/* --tmpfs options (an OCI config's) */
};

struct dev_spec {		/* a vgpio device passed through */
	char *path;
};

enum root_kind {
	ROOT_OVERLAY,		/* --image REF or --rootfs DIR: overlay on a lower */
	ROOT_BIND,		/* --rootfs DIR --bind-rootfs */
	ROOT_HOST,		/* --image host: tmpfs with the host's system dirs */
};

enum net_mode { NET_NONE, NET_HOST, NET_EGRESS };

/* The writable layer's default size (--disk): half the box's memory cap.
 * The layer is a tmpfs charged to that cap, so a full layer answers
 * ENOSPC while the box's processes still have the other half (man
 * kern-box, --disk). kern-fs run by hand assumes kern box's default cap. */
#define KERN_MEMORY_DEFAULT (512ULL << 20)
static inline uint64_t disk_default(uint64_t memory)
{
	return (memory ? memory : KERN_MEMORY_DEFAULT) / 2;
}

/* kern-fs: everything PID 1 needs to build the root (isolation.md §2.6). */
struct fs_config {
	enum root_kind root;
	const char *lower;	/* overlay lower / bound root; unused for ROOT_HOST */
	const char *scratch;	/* <runtime>/scratch/<name>-<pid>; upper/ work/ merged/ */
	uint64_t disk;		/* size of the writable layer's tmpfs; 0 = the memory cap alone */
	const char *hostname;
	int read_only;
	int rootless;		/* overlay needs userxattr */
	/* A root caller's box whose root is a subordinate id (ns.h): host
	 * paths come as trees from the supervisor over idm_fd (idmount.h),
	 * and the working directory is already scratch. */
	int shifted;
	int idm_fd;
	int net_host;		/* keep lo as the host's; copy resolv.conf */
	int cgroup2;		/* mount the read-only cgroup2 view */
	/* PID 1 joins the box cgroup after the root is built, and makes its
	 * cgroup namespace then, rooted there (kern box's late cgroup). */
	int cgroup_late;
	int sysfs;		/* --sysfs: a read-only, masked sysfs of the box's network namespace */
	/* --netns: the detached sysfs the supervisor made in the joined
	 * namespace (nsjoin.h), which PID 1 attaches; 0 = none (descriptor 0
	 * is stdin, never a mount). */
	int sysfs_fd;
	int mqueue_fd;		/* --ipcns: the joined IPC namespace's mqueue, the same way */
	int uts_joined;		/* --utsns: the joined UTS namespace keeps its name */
	const char *workdir;	/* created if missing */
	struct bind_spec *binds;
	int nbinds;
	struct tmpfs_spec *tmpfs;
	int ntmpfs;
	struct tmpfs_spec *vdisks;	/* vdisks with backend = "disk" (vdisk.h) */
	int nvdisks;
	struct dev_spec *devices;
	int ndevices;
	int tty;		/* -t: a devpts of the box's own at /dev/pts, /dev/ptmx, /dev/tty */
};

/* A shifted box's subordinate ids (ns.h): box uid and gid 0 are ubase and
 * gbase on the host. */
struct ns_ids {
	unsigned long ubase, ucount, gbase, gcount;
	int from_subid;		/* root's rows, not kern's default */
};

/* kern-ns (isolation.md §3). */
struct ns_config {
	int net_host;
	int keep_ipc, keep_uts;	/* --ipcns, --utsns: joined by the supervisor, not made */
	int range;		/* map a subordinate range */
	int range_explicit;	/* --uid-range: warn when it cannot be had */
	int host_root;		/* --map-host-root: a root caller's box root is host root */
	int no_userns;		/* root, no user namespace at all (nouserns.h): no maps */
	struct ns_ids ids;	/* a shifted box's, read once (ns_root_ids) */
	uid_t uid;		/* the caller, outside */
	gid_t gid;
};

/* kern-seccomp: the environment and the lockdown of the workload. */
struct run_config {
	char **env;		/* final KEY=VALUE list, NULL-terminated */
	struct lockdown ld;
	char **argv;		/* the command */
	int tty;		/* -t: the workload's fds 0-2 are a pty of the box's own */
	/* kern-oci create: init, locked down, ends the launcher's wait and
	 * reads one byte from gate_fd (kern-oci start) before the workload. */
	int gated;
	int gate_fd;
};

#endif
