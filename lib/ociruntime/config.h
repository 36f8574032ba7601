/* An OCI runtime bundle's config.json (runtime-spec config.md and
 * config-linux.md), read strictly: every field is one kern-oci knows and
 * maps, or the parse fails with one line naming it (never ignored
 * silently). The file is hostile: sizes, depths, counts and every string
 * are bounded before anything is kept. */
#ifndef KERN_OCIRUNTIME_CONFIG_H
#define KERN_OCIRUNTIME_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/strv.h"

/* Refused before it is read (config.json is megabytes at most in practice). */
#define OCI_CONFIG_MAX (4u << 20)
#define OCI_MAX_ARGS 4096
#define OCI_MAX_ENV 4096
#define OCI_MAX_MOUNTS 128
#define OCI_MAX_OPTS 32
#define OCI_MAX_PATHS 128
#define OCI_MAX_CAPS 64
#define OCI_MAX_RLIMITS 16
#define OCI_MAX_NS 8
#define OCI_MAX_SYSCTL 64
#define OCI_MAX_SYSCALLS 1024	/* names in one linux.seccomp.syscalls entry */

struct oci_mount {
	const char *dst, *type, *src;	/* type and src may be NULL */
	const char *opts[OCI_MAX_OPTS];
	int nopts;
};

struct oci_idmap {
	uint64_t container, host, size;
};
#define OCI_MAX_IDMAPS 16

struct oci_rlimit {
	const char *type;		/* RLIMIT_NOFILE, ... */
	uint64_t soft, hard;
};

/* The five capability sets, in config.md's order. */
enum { OCI_CAP_BOUNDING, OCI_CAP_EFFECTIVE, OCI_CAP_PERMITTED, OCI_CAP_INHERITABLE, OCI_CAP_AMBIENT,
       OCI_CAP_SETS };

struct oci_config {
	const char *version;
	const char *root;		/* root.path as written */
	int root_ro;
	const char *const *args;	/* NULL-terminated, into pool */
	int nargs;
	const char *env[OCI_MAX_ENV + 1];
	int nenv;
	const char *cwd;
	int terminal;
	uint32_t uid, gid;
	int umask_set;
	uint32_t umask;
	int caps_set;			/* process.capabilities present */
	const char *caps[OCI_CAP_SETS][OCI_MAX_CAPS];
	int ncaps[OCI_CAP_SETS];
	struct oci_rlimit rlimits[OCI_MAX_RLIMITS];
	int nrlimits;
	int nnp;
	const char *apparmor;
	int oom_adj_set;
	int oom_adj;
	const char *hostname;
	struct oci_mount mounts[OCI_MAX_MOUNTS];
	int nmounts;
	const char *ns[OCI_MAX_NS];	/* linux.namespaces[].type, in order */
	const char *ns_path[OCI_MAX_NS];	/* and its path, NULL when not given */
	int nns;
	struct oci_idmap uidmap[OCI_MAX_IDMAPS], gidmap[OCI_MAX_IDMAPS];
	int nuidmap, ngidmap;
	const char *masked[OCI_MAX_PATHS], *readonly[OCI_MAX_PATHS];
	int nmasked, nreadonly;
	const char *sysctl_key[OCI_MAX_SYSCTL], *sysctl_val[OCI_MAX_SYSCTL];	/* linux.sysctl */
	int nsysctl;
	const char *cgroups_path;	/* linux.cgroupsPath, NULL when absent or "" */
	uint64_t cpu_shares;		/* linux.resources.cpu.shares, 0 when absent */
	int mem_set, swap_set, pids_set, cpu_set;
	uint64_t mem, swap, pids;	/* swap: memory+swap, as memory.swap */
	uint64_t cpu_quota, cpu_period;
	char *annotations;		/* the object's JSON text, re-quoted; "{}" when absent */
	char *seccomp_json;		/* linux.seccomp's JSON text as given, NULL when absent */
	size_t seccomp_len;
	const char *seccomp_file;	/* set by kern-oci: where its compiled program is */
	struct strv pool;		/* owns every string above */
	const char *argv_store[OCI_MAX_ARGS + 1];
};

/* Parse config.json's bytes into c (zeroed first). Returns 0, or -1 with
 * one line in why naming the field (`linux.intelRdt is not supported`). */
int oci_config_parse(const char *js, size_t len, struct oci_config *c, char *why, size_t whylen);
/* An exec's process.json (the process object alone) into c's process
 * fields, by the same rules. */
int oci_process_parse(const char *js, size_t len, struct oci_config *c, char *why, size_t whylen);
void oci_config_free(struct oci_config *c);

#endif
