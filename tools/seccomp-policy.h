/* The seccomp policy of isolation.md §6 as libseccomp rules, shared by the
 * build-time generator (tools/seccomp-gen.c) and the load-cost benchmark
 * (bench/seccomp-load.c), so both build exactly the same programs. */
#ifndef KERN_SECCOMP_POLICY_H
#define KERN_SECCOMP_POLICY_H

#include <seccomp.h>
#include <stdint.h>

#define MAX_CALLS 1024
#define MAX_NR 1024		/* every table number is below this */
#define AF_NETLINK_NR 16
/* socket() and socketpair() domains the filter decides by value: every
 * family number the kernel has (AF_MAX is 46 in 6.18) with room to grow;
 * NETLINK_SPAN is the kernel's MAX_LINKS. Above these the kernel itself
 * answers EAFNOSUPPORT / EPROTONOSUPPORT. */
#define FAMILY_SPAN 64
#define NETLINK_SPAN 32
#define CLONE_NS_FLAGS 0x7E020000u
/* The ioctl requests that write into a terminal's input queue (TIOCSTI)
 * or drive a virtual console (TIOCLINUX): refused with EPERM in every mode
 * (box-cli.md §2). The asm-generic numbers, the same on x86_64 and
 * aarch64. */
#define TIOCSTI_NR 0x5412u
#define TIOCLINUX_NR 0x541Cu

#define NARCH 2
#define NKILL 24
#define NENOSYS 11
#define NMODE 3

enum cls { C_NONE, C_ALLOW, C_KILL, C_ENOSYS, C_REVIEWED };

struct call {
	char name[64];
	int nr;
};
struct table {
	const char *arch;	/* "x86_64" | "aarch64" */
	const char *path;
	struct call calls[MAX_CALLS];
	int n;
};
struct arch_info {
	const char *name;
	uint32_t scmp;		/* SCMP_ARCH_* */
	uint32_t audit;		/* AUDIT_ARCH_* */
};

struct sets {
	int allow[MAX_CALLS], nallow;
	int kill[NKILL];
	int enosys[NENOSYS];
	int socket_nr, socketpair_nr, clone_nr, ioctl_nr;
};

extern struct table pinned[NARCH];
extern const struct arch_info arches[NARCH];
extern const char *const mode_names[NMODE];
extern int errors;		/* complaints so far */

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Read "name number" lines into the pinned table of an architecture. */
void read_table(struct table *t, const char *arch, const char *path);
/* Read data/seccomp/moby-allow-names.txt. */
void read_names(const char *path);
enum cls classify(const char *name);
int lookup(const struct table *t, const char *name);
int arch_index(const char *name);
/* Dies unless every pinned call is classified and the sets are sane. */
void check_policy(void);
/* The header coverage check against a tools/syscall-table listing. */
void check_headers(int a, const char *path);
/* The number sets of one architecture (isolation.md §6.3 step 4). */
void resolve(int a, struct sets *s);
/* The address families (and netlink protocols) a box may open sockets of,
 * man kern-seccomp's table; every other one below the spans is refused. */
int family_allowed(unsigned family);
int netlink_allowed(unsigned protocol);
/* The program of one mode for one architecture, ready to export or load. */
scmp_filter_ctx build(int a, int mode, const struct sets *s);

/* Mode bits and open flags as the x86_64 and aarch64 system calls take
 * them (the build host's headers could differ). */
#define SXID_S_ISUID 04000u
#define SXID_S_ISGID 02000u
#define SXID_O_CREAT 0100u
#define SXID_O_TMPFILE 020000000u	/* __O_TMPFILE, without O_DIRECTORY */
/* The stacked no-setuid/setgid-files program of one architecture. */
scmp_filter_ctx build_sxid(int a);

#endif
