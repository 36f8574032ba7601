/* The records of running boxes under <runtime> (box-cli.md §7.1, the "box
 * registry"): instances/<name> records, claims/<name>.lock name locks,
 * scratch/ and logs/. A record is live only while its supervisor pid exists
 * with the recorded start time; dead records vanish from every listing at
 * once. */
#ifndef KERN_STATE_RECORDS_H
#define KERN_STATE_RECORDS_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "box/boxns.h"

struct ns_ids;

#define RECORD_MAX_LABELS 64
#define RECORD_MAX_ULIMITS 16

struct box_record {
	char name[65];
	pid_t sup_pid;
	unsigned long long sup_start;	/* field 22 of /proc/<pid>/stat */
	pid_t pid1;			/* host pid of the box's init, 0 until known */
	/* The supervisor's descriptors of the box's namespaces, in box_ns
	 * order (boxns.h); known only when every one is above 2. */
	int nsfd[BOX_NS_COUNT];
	long long created;		/* unix seconds */
	char image[512];
	char cgroup[1024];		/* cg_record() */
	char seccomp[32];
	uint64_t caps;
	char user[128];			/* "uid:gid[:g1,g2]" or "" for root */
	/* A root caller's box whose root is a subordinate id (ns.h): kern
	 * exec becomes box root after joining it, and applies the no
	 * setuid/setgid files filter where the box has it (lockdown.h). */
	int shifted;
	int restrict_sxid;
	/* Root's box without a user namespace (box/nouserns.h): kern exec
	 * joins the rest, as root only, with the workload's host ids and no
	 * capability; uid 0 only if the box had --workload-is-host-root. */
	int no_userns;
	int host_root;
	char lower[PATH_MAX];
	char scratch[PATH_MAX];
	int byte1;			/* memory enforcement, for kern exec */
	char *labels[RECORD_MAX_LABELS];	/* "k=v" */
	int nlabels;
	/* What `kern exec` must reproduce (isolation.md §10): the box's own
	 * environment (never PID 1's, which is the launcher's host env), its
	 * working directory, AppArmor profile and --ulimit specs. */
	char **env;			/* KEY=VALUE, NULL-terminated; NULL if unknown */
	char workdir[PATH_MAX];
	char apparmor[160];
	char *ulimits[RECORD_MAX_ULIMITS];	/* NAME=SOFT[:HARD] as given */
	int nulimits;
};

/* Resolve and create <runtime> and its children. Prints a setup error and
 * returns -1 when it cannot. */
int runtime_root(char *out, size_t len);
/* Create the children of a runtime root given explicitly (kern-wait). */
int runtime_prepare(const char *root);

/* The same across every runtime directory that may hold the caller's
 * boxes (kern_runtime_each, state/runtime_dirs.c): records_each over each;
 * the directory holding a live record of name (0, or -1 when none does);
 * whether a directory other than runtime holds one (1) or not (0). */
int records_each_all(void (*fn)(const struct box_record *, void *), void *ctx);
int records_find(const char *name, char *runtime, size_t len);
int records_live_elsewhere(const char *runtime, const char *name);

unsigned long long proc_start_time(pid_t pid);

/* Atomically claim rec->name: a per-name lock, then O_EXCL creation of the
 * record (a dead record of the same name is removed first). Returns 0, or
 * 1 after printing `error: box: a box named '<name>' is already running`. */
int records_claim(const char *runtime, const struct box_record *rec);
/* Rewrite the record (temp + rename) if it is still ours. */
int records_update(const char *runtime, const struct box_record *rec);
/* Remove the record if it still belongs to (sup_pid, sup_start). */
void records_remove(const char *runtime, const struct box_record *rec);
/* Load instances/<name>. Returns 0, or -1 when absent or malformed. */
int records_load(const char *runtime, const char *name, struct box_record *rec);
/* 1 when instances/<name> names a live box, 0 when the file is dead,
 * malformed or unreadable, -1 when there is none (or name is no box
 * name). */
int records_live_at(const char *runtime, const char *name);
void record_free(struct box_record *rec);
int record_live(const struct box_record *rec);
/* 1 when the record names the supervisor's namespace descriptors. */
int record_has_ns(const struct box_record *rec);

/* Call fn for every live record, in name order; dead records found on the
 * way are removed. Returns the number of live records. */
int records_each(const char *runtime, void (*fn)(const struct box_record *, void *), void *ctx);

/* Where this process's scratch directory goes: <runtime>/scratch, or,
 * when that is on overlayfs (an upper directory cannot be), a private
 * /dev/shm/kern-<uid>/scratch. */
int scratch_path(const char *runtime, const char *name, char *out, size_t len);

/* Create the scratch_path() directory (0700) with merged/ and, for an
 * overlay root, upper/ and work/; upper is 0755 when a non-root user or a
 * range map is in play (upper_open). A shifted box's root (owner, ns.h)
 * owns the directory, upper/ and work/. Prints the failure. */
int scratch_create(const char *runtime, const char *name, int overlay, int upper_open,
		   const struct ns_ids *owner, char *out, size_t len);

/* Remove a scratch directory: the layout scratch_create() made with a
 * few rmdir()s, whatever else is in it with rmtree(). 0 or -1. */
int scratch_remove(const char *scratch);

/* Valid box NAME (box-cli.md §2). */
int box_name_valid(const char *name);

#endif
