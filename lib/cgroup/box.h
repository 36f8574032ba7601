/* Inside the cgroup module: one box's cgroups, shared by placement (cgroup/place.c),
 * the v1 and v2 limit writers, OOM and removal. Not for other modules:
 * they use cgroup.h. */
#ifndef KERN_CG_BOX_H
#define KERN_CG_BOX_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "cgroup/layout.h"

#define CG_DEFAULT_MEMORY (512ULL << 20)
#define CG_DEFAULT_PIDS 512
#define CG_PERIOD_US 100000

/* Where the box's parent came from (isolation.md §7.2). Owned paths make a
 * failed memory or pids write fatal; the others are best effort. */
enum cg_place {
	CG_PLACE_NONE,		/* uncapped */
	CG_PLACE_V2_ROOT,	/* /sys/fs/cgroup/kern.slice */
	CG_PLACE_V2_USER,	/* user@<uid>.service/kern.slice */
	CG_PLACE_V2_SELF,	/* the current cgroup, the caller moved into kern-sup-<pid> */
	CG_PLACE_V2_DELEGATED,	/* a delegated ancestor of the current cgroup */
	CG_PLACE_V1_ROOT,	/* <mount>/kern */
	CG_PLACE_V1_DELEGATED,	/* <mount>/kern/user-<uid>, or the current cgroup */
};

/* Why nothing could be placed, for the notice of isolation.md §7.7. */
enum cg_why {
	CG_WHY_NONE,
	CG_WHY_NO_CONTROLLER,	/* no memory controller on this host */
	CG_WHY_NOT_WRITABLE,	/* no writable or delegated cgroup */
	CG_WHY_NO_SCOPE,	/* KERN_NO_SCOPE, and nothing delegated */
	CG_WHY_NO_MANAGER,	/* no reachable systemd user manager, nothing delegated */
};

struct cg_hier {
	char mount[PATH_MAX];	/* the hierarchy's mount point */
	char parent[PATH_MAX];	/* kern.slice, kern, a delegated cgroup */
	char dir[PATH_MAX];	/* the box cgroup: parent/kern-box-<name>-<sup> */
	unsigned ctls;		/* controllers the box uses in this hierarchy */
	int fd;			/* O_PATH descriptor of dir */
	int leaf_fd;		/* v1: dir/box, where the tasks live; -1 on v2 */
};

struct cg_box {
	uid_t uid;		/* who places: root gets the owned parents */
	int version;		/* 0 uncapped, 1, 2 */
	enum cg_place place;
	enum cg_why why;
	struct cg_hier h[CG_NCTL];
	int nh;
	unsigned present;	/* controllers the host has at all */
	unsigned enforced;	/* verified in force for this box */
	int mem_given, byte1;
	uint64_t memory, pids, cpu_micro;
	uint64_t cpu_quota;	/* µs per CG_PERIOD_US, 0 = uncapped */
	uint64_t cpu_shares;	/* v1 cpu.shares, 0 = the parent's default */
	char cpuset[256];
	/* The first memory or pids write the kernel refused, for the setup
	 * failure line on owned paths. */
	unsigned failed;
	char failure[PATH_MAX + 128];
	/* v2 CG_PLACE_V2_SELF: the caller's own cgroup became the parent and
	 * the caller lives in sup (kern-sup-<pid>) below it. */
	char sup[PATH_MAX];
	unsigned sup_enabled;	/* controllers we enabled in the parent's subtree_control */
	/* OOM (isolation.md §7.5) */
	int oom_efd;		/* v1 eventfd, -1 */
	uint64_t oom_base;	/* oom_kill count when opened */
	int oom_event;		/* the v1 eventfd fired */
	/* v1: limits read back by their own writes (cg_write_read), which
	 * cg_v1_verify() takes instead of opening each file again. */
	struct {
		int memory, pids, oom;	/* 1: the value below was read back */
		uint64_t memory_v, pids_v, oom_disabled;
	} back;
	char record[8192];
	/* cg_create() with req->later: what cg_create_later() places with. */
	struct {
		int pending;
		const char *name;
		pid_t supervisor;
		const struct cg_limits *req;
	} later;
};

/* cgroup/place.c: choose the parent(s) and create the box dir(s). Fills
 * h[], nh, version, place, why, present. Returns 0 (possibly with nh == 0:
 * uncapped), or -1 after a setup failure line. */
int cg_place(struct cg_box *cg, struct cg_layout *l, const char *name, pid_t sup,
	     const struct cg_limits *req);
/* The box cgroup at req->path below each hierarchy's root (cg_place()
 * calls it when req->path is set); cg_find_path() finds it again. */
int cg_place_path(struct cg_box *cg, struct cg_layout *l, const struct cg_limits *req);
int cg_find_path(struct cg_box *cg, struct cg_layout *l, const char *path);
/* Find what cg_place() made for (name, sup) without creating anything. */
int cg_find(struct cg_box *cg, struct cg_layout *l, const char *name, pid_t sup);
/* The uid this process has on the host (through a user namespace map). */
uid_t cg_host_uid(void);
/* Box dir name "kern-box-<name>-<sup>". */
int cg_box_name(char *out, size_t len, const char *name, pid_t sup);
/* Format a path of at most PATH_MAX bytes into out (which may be one of
 * the arguments); -1 with ENAMETOOLONG when it does not fit. */
int cg_path(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Open h->dir into h->fd. */
int cg_hier_open(struct cg_hier *h);

/* cgroup/v1.c / cgroup/v2.c: write cg->memory, pids, cpu_quota and cpuset (a
 * refused memory or pids write is noted in cg->failed and cg->failure),
 * then read back what is in force. */
void cg_v1_apply(struct cg_box *cg);
void cg_v2_apply(struct cg_box *cg);
unsigned cg_v1_verify(struct cg_box *cg);
unsigned cg_v2_verify(struct cg_box *cg);
/* v1: an eventfd signalled on each OOM in the box (cgroup.event_control). */
int cg_v1_oom_register(struct cg_box *cg);
/* The box's oom_kill count (v1 memory.oom_control, v2 memory.events). */
int cg_oom_count(struct cg_box *cg, uint64_t *n);

/* cgroup/limits.c: shared by both versions. */
/* Note a refused write of value to h->dir/file for controller c. */
void cg_note_failure(struct cg_box *cg, enum cg_ctl c, const struct cg_hier *h, const char *file,
		     const char *value);
/* 1 if two cpu lists ("0-3,6") name the same cpus. */
int cg_cpulist_equal(const char *a, const char *b);
/* The hierarchy serving c, or NULL. */
struct cg_hier *cg_hier_of(struct cg_box *cg, enum cg_ctl c);
/* Walk from h->dir up to the mount: 1 when holds(dirfd, arg) is true for
 * the box's cgroup or an ancestor (dirfd an O_PATH descriptor of it): a
 * cap set above the box binds it too (a MemoryMax= on a delegated slice). */
int cg_any_up(const struct cg_hier *h, int (*holds)(int dirfd, const void *arg), const void *arg);
/* cg_any_up() of: file reads at or below want. */
int cg_capped_up(const struct cg_hier *h, const char *file, uint64_t want);

/* cgroup/sweep.c */
int cg_sweep_dir(const char *parent, int max);

/* cgroup/tree.c: v1 boxes are <dir> (the caps) and <dir>/box (the tasks). */
#define CG_LEAF "box"
int cg_leaf_make(struct cg_hier *h);
int cg_leaf_open(struct cg_hier *h);
/* SIGKILL every task in dirfd's cgroup and below; how many were listed. */
int cg_tree_kill(int dirfd);
/* rmdir every (empty) cgroup below dirfd, deepest first. */
void cg_tree_rmdir_below(int dirfd);
/* Sum of `key N` in file over dirfd's cgroup and everything below. */
int cg_tree_sum_key(int dirfd, const char *file, const char *key, uint64_t *out);

/* 1 when x (in force) caps a request of want; CG_UNLIMITED never does. */
static inline int cg_caps(uint64_t x, uint64_t want)
{
	return x != UINT64_MAX && x <= want;
}

#endif
