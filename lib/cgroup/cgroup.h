/* Box cgroups on v2 and v1 (isolation.md §7): placement, limits written
 * and read back, OOM evidence, whole-box kill, removal. Used by kern-cg
 * (create), kern-wait and `kern box` (supervise), `kern exec`, `kern stop`
 * and `kern recover`. */
#ifndef KERN_CGROUP_H
#define KERN_CGROUP_H

#include <stdint.h>
#include <sys/types.h>

struct cg_limits {
	uint64_t memory;	/* bytes; 0 = kern's default 512 MiB */
	int memory_given;	/* --memory was explicit: byte 1 and the notices depend on it */
	uint64_t pids;		/* 0 = default 512 */
	int pids_given;
	uint64_t cpu_micro;	/* micro-CPUs (--cpus 0.5 = 500000); 0 = uncapped */
	const char *cpuset;	/* NULL = unset */
	uint64_t cpu_shares;	/* v1 cpu.shares (2..262144; v2 cpu.weight from it); 0 = unset */
	/* The box cgroup is exactly this path below each hierarchy's root
	 * (kern-oci's linux.cgroupsPath, checked by cgroup_path_check());
	 * root only; NULL = kern's own placement. */
	const char *path;
	int require_limits;	/* --require-limits / KERN_REQUIRE_LIMITS */
	int allow_uncapped;	/* --allow-uncapped / KERN_ALLOW_UNCAPPED */
	int no_scope;		/* KERN_NO_SCOPE */
	int sweep_later;	/* the caller sweeps (cg_sweep_parents) once the box runs */
	/* The caller makes the box cgroup later, by cg_create_later(), where
	 * that can wait (on v1: PID 1 joins it itself, cg_join_by()). */
	int later;
};

struct cg_box;	/* opaque; one box's cgroup(s) in every hierarchy used */

/* Step 7: pick the parent for this host, create kern-box-<name>-<sup>, write
 * and read back the limits, print the notices of isolation.md §7.7, sweep up to 128
 * orphans (unless req->sweep_later). *out is set even when the box runs uncapped (no hierarchy).
 * Returns 0, or -1 after printing `kern: sandbox setup failed:` (and a
 * hint) when --require-limits cannot be met or an owned hierarchy refuses
 * a limit: the caller ends with EXIT_SETUP. */
int cg_create(const char *name, pid_t supervisor, const struct cg_limits *req, struct cg_box **out);
/* With req->later, off cgroup v2 and without req->path, cg_create()
 * makes nothing, and then cg_pending() is 1 until cg_create_later() does
 * what cg_create() would have done (same output, same failures; on
 * failure cg is left uncapped for cg_destroy()). `kern box` makes a v1
 * box cgroup while PID 1 builds the root, off the start's critical path.
 * A pending box is not mapped in a child forked or cloned meanwhile
 * (MADV_DONTFORK): PID 1 must not touch it. */
int cg_pending(const struct cg_box *cg);
int cg_create_later(struct cg_box *cg);

/* kern-wait in an applet chain: find what kern-cg created for (name, sup)
 * and re-verify it against req, without printing notices again; 0, or -1
 * printed, as cg_create(). */
int cg_open(const char *name, pid_t supervisor, const struct cg_limits *req, struct cg_box **out);

/* Open the cgroups named by a registry record (cg_record()), for `kern
 * exec`, `kern stop` and `kern recover`. */
int cg_open_record(const char *record, struct cg_box **out);
/* One line describing the box cgroup(s) for the registry record; "" when
 * uncapped. Never contains a newline or tab. */
const char *cg_record(const struct cg_box *cg);

/* Outcome byte 1 (box-cli.md §4). */
int cg_byte1(const struct cg_box *cg);
/* 1 when the box cgroup is on cgroup v2 (PID 1 then mounts the read-only
 * cgroup2 view of isolation.md §7.6). */
int cg_is_v2(const struct cg_box *cg);

/* Move the calling process, which must be single threaded, into the box
 * cgroup(s): PID 1 first thing after it is forked or cloned (isolation.md §2.5 step
 * 12: the supervisor itself never enters, so an OOM group kill can never
 * take it; a late cgroup, cg_join_by(), before anything of the box runs),
 * kern exec's relay, the egress proxy. Returns 0 or -1 with errno. */
int cg_join(struct cg_box *cg);
/* For a process that can no longer reach the hierarchy (PID 1 with the
 * box's root): descriptors of the box cgroup's tasks (v1 leaf) or
 * cgroup.procs, opened here, at most max (CG_JOIN_MAX). Returns how many
 * (0 when uncapped), or -1 with errno and *failed the file's path.
 * cg_join_by() writes "0" to each: it moves the caller, as cg_join()
 * does. */
#define CG_JOIN_MAX 4
int cg_join_open(const struct cg_box *cg, int *fds, int max, char *failed, size_t len);
int cg_join_by(const int *fds, int n);
/* v2: the box cgroup's descriptor, for clone3(CLONE_INTO_CGROUP), which
 * places PID 1 at birth; -1 on v1 or uncapped (PID 1 then cg_join()s). */
int cg_clone_fd(const struct cg_box *cg);

/* A descriptor that becomes readable on a v1 OOM event (eventfd through
 * cgroup.event_control), or -1 when the kernel kills the group itself. */
int cg_oom_fd(struct cg_box *cg);
/* Called when cg_oom_fd() is readable: 1 if the kernel OOM killer acted,
 * and the caller then takes the whole box down with cg_kill_all(). */
int cg_oom_fired(struct cg_box *cg);
/* Evidence after PID 1 is reaped and before removal (isolation.md §7.5). */
int cg_oom_evidence(struct cg_box *cg);

/* SIGKILL every task in the box cgroup(s) (v2 cgroup.kill, v1 a loop). */
void cg_kill_all(struct cg_box *cg);
/* Remove the box cgroup(s) once empty and free cg. */
void cg_destroy(struct cg_box *cg);
/* The supervisor's teardown, once PID 1 is reaped (so, usually, the box
 * cgroup is empty already): one rmdir per directory, and cg_kill_all()
 * then cg_destroy() only if something is still there. Frees cg. */
void cg_teardown(struct cg_box *cg);
/* Free without removing (a process that is not the owner). */
void cg_close(struct cg_box *cg);

/* Remove empty kern-box-*-<pid> directories whose pid is dead. */
int cg_sweep_orphans(int max);
/* The orphan sweep of cg_create() over the parents cg uses, for a caller
 * that asked for it later (sweep_later). */
void cg_sweep_parents(struct cg_box *cg);

/* For `kern doctor` and tests: the caps verified in force (CG_HAS_*), and
 * one line saying where the box cgroup is ("v1 root: ..."). */
enum { CG_HAS_MEMORY = 1, CG_HAS_PIDS = 2, CG_HAS_CPU = 4, CG_HAS_CPUSET = 8 };
unsigned cg_enforced(const struct cg_box *cg);
const char *cg_describe(const struct cg_box *cg);

#endif
