/* kern box, in three files: box.c parses, validates and launches;
 * box_resolve.c turns the validated flags into every step's config
 * (resolve_steps); box_plan.c prints those configs as the applet chain
 * (--plan). This header is what the three share. */
#ifndef KERN_BOX_CMD_H
#define KERN_BOX_CMD_H

#include <limits.h>
#include <stdint.h>

#include "base/strv.h"
#include "box/box.h"
#include "box/mountspec.h"
#include "box/ns.h"
#include "box/profiles.h"
#include "cgroup/cgroup.h"
#include "image/image.h"
#include "lockdown/lockdown.h"
#include "state/records.h"
#include "steps/steps.h"

#define MAX_LIST 256

/* Scalars and pointers first, the arrays after them: a start touches few
 * of the arrays, and each page first touched on the start path is a page
 * fault (box_run() keeps this in static storage for that reason). */
struct box_args {
	const char *name;
	const char *image, *rootfs;
	int bind_rootfs;
	int read_only;
	int nbinds;
	int ntmpfs;
	const char *workdir;
	int ncap_drop, ncap_add;
	int uid_range;		/* 1 --uid-range, -1 --no-uid-range, 0 unset */
	int map_host_root;
	int userns;		/* enum userns_mode */
	int host_root_workload;	/* --workload-is-host-root */
	int no_userns;		/* decided: root, no user namespace (nouserns.h) */
	int userns_err;		/* auto: the refused probe's errno */
	int userns_unprobed;	/* auto, root: no probe; a refused clone starts kern again (box_run) */
	const char *user;
	const char *entrypoint;
	int entrypoint_set;
	unsigned long long timeout;
	struct cg_limits limits;
	int cpus_set;
	int sysfs;		/* --sysfs */
	const char *seccomp_bpf;	/* --seccomp-bpf FILE */
	const char *netns;	/* --netns PATH: join, not make, the network namespace */
	const char *ipcns, *utsns;	/* --ipcns, --utsns PATH: the same */
	int untrusted;
	const char *apparmor;
	int net;		/* enum net_mode */
	int net_flag;		/* --net/--network was given */
	int negress;
	const char *egress_raw;
	char *egress_copy;
	int nprofiles;
	int nenv_files;
	int nenv_kv;
	int nlabels;
	int nulimits;
	int show_config, plan, detach, quiet, tty;
	int pull;
	const char *platform;
	char arch[16];
	const char *hostname;
	const char *config;
	char **cmd;
	int ncmd;
	/* resolved by validate() */
	int seccomp_mode;
	uint64_t caps;
	struct strv envfile_entries;	/* file contents, in order, never on argv */
	char hostname_buf[HOST_NAME_LEN + 1];
	uint64_t disk;		/* --disk, or disk_default() of the memory cap */
	int disk_given;
	/* kern-oci (box_run): PID 1 waits on gate_fd before the workload,
	 * ready_fd hears the launch's outcome as -d's launcher does, and -t's
	 * pty goes to console_fd (supervise.h); -1 for kern box. */
	int gate_fd, ready_fd, console_fd;
	struct profiles prof;		/* its counts first, its arrays last */
	char rootfs_real[PATH_MAX];	/* realpath() of rootfs, once, by validate(); "" if it failed */
	/* The lists, each touched only when its flag is given. */
	struct bind_spec binds[MAX_LIST];
	struct tmpfs_spec tmpfs[MAX_LIST];
	char *cap_drop[MAX_LIST], *cap_add[MAX_LIST];
	char *egress[MAX_LIST];
	char *profile_tokens[MAX_LIST];
	char *env_files[MAX_LIST];
	char *env_kv[MAX_LIST];
	char *labels[RECORD_MAX_LABELS];
	struct ulimit_spec ulimits[LOCKDOWN_MAX_ULIMITS];
	char *ulimit_raw[LOCKDOWN_MAX_ULIMITS];
	int envfile_end[MAX_LIST];	/* where each file's entries end in it */
};

/* Every step's config, resolved from the flags, the environment,
 * kern.toml and the image: launch() runs them in this process and --plan
 * prints them with to_argv(), so the printed chain is the box by
 * construction. What exists only once a box starts (scratch, descriptors)
 * is not here: launch() adds it, and the chain's steps find it
 * themselves. */
struct box_steps {
	struct cg_step cg;
	int egress;			/* kern-egress runs: --egress-allow */
	struct egress_step eg;
	struct ns_step ns;
	struct wait_step wait;
	struct fs_config fs;
	/* On the way: the user (-u or the image's User) in the root's /etc. */
	const char *user;
	struct lockdown ld;		/* its ids */
	int user_rc;			/* -1: not found, user_why says why */
	char user_why[512];
	int nonroot;
	int host_root_ids;		/* no user namespace: the workload is host uid/gid 0 */
	char rec_user[128];		/* uid:gid[:groups] for the record */
	struct tmpfs_spec tmpfs[MAX_LIST + PROFILES_MAX_VDISKS];	/* --tmpfs, vdisks */
	struct tmpfs_spec vdisks[PROFILES_MAX_VDISKS];			/* backend = "disk" */
	struct dev_spec devices[PROFILES_MAX_DEVICES];			/* vgpio */
	char envfile_fd[MAX_LIST][32];	/* /proc/self/fd/N: the plan opens each file there */
	char proxy_env[4][64];
	/* kern-seccomp. Zero is its default: never copied from
	 * seccomp_step_defaults, so that only the entries used are touched
	 * (each first touch is a page fault, and the fork of PID 1 copies
	 * what was touched). Last, for the same reason. */
	struct seccomp_step sc;
};

/* As struct box_args: the small members first, the steps' configs next
 * (their seccomp config last of all), the three paths at the end. */
struct launch {
	struct box_args *a;
	struct image_config icfg;
	struct fs_config fs;
	struct run_config run;
	struct strv argv, env;
	int range_wanted, range_silent;
	int alive_fd, started_fd;
	/* PID 1 and the supervisor while the box starts (box_prepare): 'm'
	 * once PID 1's ids are mapped; then, with --egress-allow, PID 1's
	 * listener the other way. fs.cgroup_late: the box cgroup is made
	 * after the clone, and PID 1 joins it on its report socket
	 * (pid1sync.h). */
	int sync[2];
	struct ns_config nc;
	int nonroot, ranged;
	int egress_ctl;
	struct box_steps s;
	char runtime[PATH_MAX];
	char scratch[PATH_MAX];
	char lower[PATH_MAX];
};

/* The egress control descriptor's number in the printed chain. */
#define PLAN_EGRESS_FD 9

/* box_resolve.c: steps 4-15 as configs in l->s, once the root is known. */
int resolve_steps(struct launch *l, enum root_kind root);
/* --rootfs: its canonical path into lower (PATH_MAX bytes; validate() resolved it once;
 * realpath() again only if that failed, to report why) and the kind of
 * root it gives. */
enum root_kind rootfs_root(const struct box_args *a, char *lower, size_t len);
/* box_resolve.c: the environment kern-seccomp would build, in l->env. */
int build_env(struct launch *l);

/* kern box with argv (argv[0] "box"), for kern-oci: gate_fd, ready_fd and
 * console_fd as in struct box_args. Returns the exit status. */
int box_run(int argc, char **argv, int gate_fd, int ready_fd, int console_fd);

/* box_plan.c: --plan, the chain printed; returns the exit status. */
int box_plan(struct box_args *a);

#endif
