/* The config of every step of the applet chain, each with its flag table
 * (flags.h): the step's applet parses its argv into it, `kern box` fills
 * it from its own flags and runs it in process, `kern box --plan` prints
 * it. The usage text of each flag stays at the top of its applet. */
#ifndef KERN_STEPS_H
#define KERN_STEPS_H

#include <stdint.h>

#include "box/box.h"
#include "cgroup/cgroup.h"
#include "lockdown/lockdown.h"
#include "state/records.h"
#include "steps/flags.h"

/* kern-cg: step 7. */
struct cg_step {
	const char *name;
	struct cg_limits limits;
};
extern const struct flag_table cg_step_flags;
extern const struct cg_step cg_step_defaults;

/* kern-egress: step 8, or --attach in the box's network namespace. */
struct egress_step {
	const char *allow;	/* D1,D2,... as given; entries checked by the applet */
	const char *name;
	int fd;			/* -1: where it lands */
	int attach;
};
extern const struct flag_table egress_step_flags;
extern const struct egress_step egress_step_defaults;

/* kern-ns: steps 9-11. */
enum ns_range { NS_RANGE_NO, NS_RANGE_IF_AVAILABLE, NS_RANGE_ASKED };
struct ns_step {
	int net_host;
	int range;		/* enum ns_range */
	int host_root;
	int no_userns;		/* root: every namespace but the user one (nouserns.h) */
	int egress_fd;		/* -1: none */
};
extern const struct flag_table ns_step_flags;
extern const struct ns_step ns_step_defaults;
/* The namespaces' part of it, for ns_enter() and ns_map(). */
void ns_step_config(const struct ns_step *s, struct ns_config *nc);

/* kern-wait: the supervisor; most of it is recorded for kern ps and exec. */
struct wait_step {
	const char *name, *runtime;
	struct cg_limits limits;	/* what kern-cg applied, to verify it */
	unsigned long long timeout;
	const char *image, *lower;
	int overlay;
	char *labels[RECORD_MAX_LABELS];
	int nlabels;
	const char *seccomp;
	uint64_t caps;
	const char *user;		/* uid:gid[:groups], as recorded */
	int tty, restrict_sxid;
	int no_userns;			/* kern-ns --no-userns came before */
	int host_root;			/* --workload-is-host-root, recorded for kern exec */
};
extern const struct flag_table wait_step_flags;
extern const struct wait_step wait_step_defaults;

/* kern-fs: struct fs_config itself; binds, tmpfs and devices point to the
 * caller's arrays of FS_STEP_MAX_ITEMS. */
#define FS_STEP_MAX_ITEMS 256
extern const struct flag_table fs_step_flags;
extern const struct fs_config fs_step_defaults;

/* kern-seccomp: the environment items and the lockdown, as flags. */
#define SECCOMP_STEP_MAX_ENV 4096
enum { SECCOMP_ENV_KV, SECCOMP_ENV_FILE };
struct seccomp_step {
	uint64_t caps;
	int caps_given;		/* else kern's default set */
	int restrict_sxid;
	int host_root;		/* --workload-is-host-root (no user namespace) */
	const char *user;
	int seccomp_mode;
	int seccomp_given;
	const char *ulimits[LOCKDOWN_MAX_ULIMITS];	/* NAME=SOFT[:HARD], checked */
	int nulimits;
	const char *apparmor;
	const char *bpf;	/* --seccomp-bpf FILE: a program stacked on kern's */
	int tty;
	/* --env K=V and --env-file PATH in their order: later wins. Last, so
	 * that a box touches only the first entries' pages. */
	int nenv;
	const char *env[SECCOMP_STEP_MAX_ENV];
	int env_tag[SECCOMP_STEP_MAX_ENV];
};
extern const struct flag_table seccomp_step_flags;
extern const struct seccomp_step seccomp_step_defaults;

/* kern-pull (also `kern pull`). */
struct pull_step {
	const char *platform;
	int policy;		/* enum pull_policy */
	int quiet;
	const char *ref;
};
extern const struct flag_table pull_step_flags;
extern const struct pull_step pull_step_defaults;

/* kern-unpack. */
struct unpack_step {
	const char *diff_id, *digest;
	const char *layer, *dir;
};
extern const struct flag_table unpack_step_flags;
extern const struct unpack_step unpack_step_defaults;

#endif
