/* Which cgroup hierarchies this process can see (isolation.md §7.1), read
 * from /proc/self/mountinfo and /proc/self/cgroup. Both paths are
 * parameters so tests can point them at fixtures; nothing here guesses
 * from directory names. */
#ifndef KERN_CG_LAYOUT_H
#define KERN_CG_LAYOUT_H

#include <limits.h>
#include <sys/types.h>

enum cg_ctl { CG_MEMORY, CG_PIDS, CG_CPU, CG_CPUSET, CG_NCTL };
#define CG_BIT(c) (1u << (c))
#define CG_ALL ((1u << CG_NCTL) - 1)

/* One mounted hierarchy. */
struct cg_mount {
	char dir[PATH_MAX];	/* mount point, e.g. /sys/fs/cgroup/memory */
	char root[PATH_MAX];	/* the hierarchy path mounted there ("/" usually) */
	unsigned ctls;		/* v1: controllers of interest in its super options */
	dev_t dev;		/* from mountinfo; cg_detect() drops mounts whose dir is not it */
	/* This process's cgroup as a directory under dir, "" when it is not
	 * visible through this mount. */
	char self[PATH_MAX];
};

struct cg_layout {
	int version;		/* 2: cgroup2 at /sys/fs/cgroup; 1: v1 mounts; 0: none */
	/* v2: one entry; v1: one per hierarchy serving a controller of interest
	 * (a co-mounted "cpu,cpuacct" is one hierarchy). */
	struct cg_mount mounts[CG_NCTL];
	int nmounts;
};

/* Name of a controller ("memory", "pids", "cpu", "cpuset"). */
const char *cg_ctl_name(enum cg_ctl c);

/* Parse a mountinfo file into *out. Returns 0 (also when nothing is
 * found: version 0), or -1 with errno when the file cannot be read. */
int cg_detect_from(const char *mountinfo_path, struct cg_layout *out);
/* Fill each mount's self from a /proc/<pid>/cgroup file. */
int cg_self_from(const char *proc_cgroup_path, struct cg_layout *l);
/* Both, from this process's /proc files, keeping only mounts that are
 * really there at their path (a later mount over /sys/fs/cgroup hides
 * them: their directory then has another device). */
int cg_detect(struct cg_layout *out);

/* The mount serving controller c, or NULL. */
struct cg_mount *cg_mount_of(struct cg_layout *l, enum cg_ctl c);

#endif
