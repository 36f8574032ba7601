/* The last setup steps before the workload (isolation.md §2.7 steps 29-32,
 * §5, §6): rlimits, AppArmor, capabilities and the uid change,
 * no_new_privs, seccomp. Used by kern-seccomp (PID 1) and `kern exec`. */
#ifndef KERN_LOCKDOWN_H
#define KERN_LOCKDOWN_H

#include <linux/capability.h>
#include <linux/filter.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

enum seccomp_mode {
	SECCOMP_ALLOWLIST,	/* default; also --security-profile untrusted */
	SECCOMP_DENYLIST,
	SECCOMP_ALLOWLIST_AUDIT,
};

/* "allowlist" | "denylist" | "allowlist-audit" -> mode, else -1. */
int seccomp_mode_parse(const char *s);
const char *seccomp_mode_name(int mode);

/* The 25 capabilities a default box keeps (isolation.md §5), as a mask. */
uint64_t caps_default(void);
/* Apply --cap-drop then --cap-add (each ALL or [CAP_]NAME) to *caps.
 * Returns 0, or -1 with *bad naming the unknown entry. */
int caps_adjust(uint64_t *caps, char *const *drop, int ndrop, char *const *add, int nadd,
		const char **bad);

#define LOCKDOWN_MAX_ULIMITS 16
#define LOCKDOWN_MAX_GROUPS 64

struct ulimit_spec {
	int resource;		/* RLIMIT_* */
	rlim_t soft, hard;
};
/* NAME=SOFT[:HARD] of box-cli.md §2.1; -1 with *why on bad input
 * (unknown name, bad number, soft > hard). */
int ulimit_parse(const char *spec, struct ulimit_spec *out, const char **why);

struct lockdown {
	uint64_t caps;		/* capabilities to keep; ignored (all 0) for a non-root user */
	int user_set;		/* switch to uid/gid/groups */
	uid_t uid;
	gid_t gid;
	gid_t groups[LOCKDOWN_MAX_GROUPS];
	int ngroups;
	const char *apparmor;	/* NULL = none */
	struct ulimit_spec ulimits[LOCKDOWN_MAX_ULIMITS];
	int nulimits;
	int seccomp_mode;
	/* A shifted box writing to the host as uid 0 through idmapped binds
	 * (idmount.h): a second filter refuses setuid and setgid modes
	 * (chmod family, O_CREAT/O_TMPFILE, mknod; openat2 ENOSYS), and
	 * LOCKDOWN_SXID_CAPS are dropped whatever caps says. */
	int restrict_sxid;
	/* No user namespace (box/nouserns.h): these ids and capabilities are
	 * the host's. Every capability set ends empty whatever caps says,
	 * the securebits keep uid 0 from regaining any at exec, and
	 * lockdown_apply() checks the result: no capability, no_new_privs,
	 * and a uid and gid other than 0 unless host_root_ok
	 * (--workload-is-host-root). */
	int host_ids;
	int host_root_ok;
	/* A program stacked on kern's own (kern box --seccomp-bpf: an OCI
	 * config's compiled profile); every filter applies, the strictest
	 * verdict wins. NULL = none. */
	const struct sock_filter *extra_bpf;
	unsigned extra_len;
};

/* --seccomp-bpf FILE: a classic BPF program, whole instructions, 1 to
 * 4096 of them, read into *p (malloc'd). 0, or -1 with errno (EINVAL for
 * a size that is no program). */
int seccomp_prog_read(const char *path, struct sock_filter **p, unsigned *n);

/* The capability restrict_sxid takes away: CAP_SETFCAP, since a file
 * capability written through an idmapped bind would hold on the host.
 * (CAP_FSETID can stay: the kernel clears setuid on a write unless the
 * writer holds it in the initial user namespace.) */
#define LOCKDOWN_SXID_CAPS (1ULL << CAP_SETFCAP)

/* Steps 29-32 in the calling process, which must be single-threaded.
 * Returns 0 with the filter installed, or 125 after printing
 * `kern: sandbox setup failed: <why>` (126 and `kern: exec: ... - refusing
 * to run` instead when for_exec). */
int lockdown_apply(const struct lockdown *ld, int for_exec);

/* 1 if a seccomp filter is installed in this process (Seccomp: 2). */
int seccomp_installed(void);

/* The names of the 35 always-denied syscalls, for --show-config. */
extern const int seccomp_denied_count;

#endif
