/* The seccomp policy of isolation.md §6 as libseccomp rules; see
 * tools/seccomp-policy.h. */
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "seccomp-policy.h"

/* isolation.md §6.1: the kill set (24) and the ENOSYS set (11). */
static const char *const kill_set[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"bpf",
	"unshare", "setns", "mount", "umount2", "pivot_root",
};
static const char *const enosys_set[] = {
	"clone3", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
	"perf_event_open", "add_key", "request_key", "keyctl", "syslog", "open_by_handle_at",
};
/* isolation.md §6.3: calls the headers may define that are deliberately
 * neither allowed nor in the 35 (they fall through to ENOSYS). */
static const char *const reviewed_set[] = {
	"_sysctl", "afs_syscall", "create_module", "get_kernel_syms", "getpmsg", "nfsservctl",
	"putpmsg", "query_module", "security", "sysfs", "tuxcall", "uselib", "ustat", "vserver",
	"migrate_pages", "move_pages", "listmount", "statmount", "lsm_get_self_attr",
	"lsm_set_self_attr", "lsm_list_modules",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(COUNT(kill_set) == NKILL && COUNT(enosys_set) == NENOSYS, "isolation.md §6.1: 24 + 11");
_Static_assert(TIOCSTI == TIOCSTI_NR && TIOCLINUX == TIOCLINUX_NR, "asm-generic terminal ioctls");
static const uint32_t tty_denied[] = {TIOCSTI_NR, TIOCLINUX_NR};

const struct arch_info arches[NARCH] = {
	{"x86_64", SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64},
	{"aarch64", SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64},
};

const char *const mode_names[NMODE] = {"allowlist", "denylist", "allowlist_audit"};

struct table pinned[NARCH];
static char (*moby)[64];
static int nmoby;
int errors;

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("seccomp-gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

void complain(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("seccomp-gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	errors++;
}

static int valid_name(const char *s)
{
	if (!*s || strlen(s) >= 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* "name number" lines; '#' comments and blank lines skipped. */
void read_table(struct table *t, const char *arch, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int lineno = 0;
	if (!f)
		die("%s: %s", path, strerror(errno));
	t->arch = arch;
	t->path = path;
	t->n = 0;
	while (fgets(line, sizeof line, f)) {
		char name[64], junk[2];
		int nr;
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%63s %d %1s", name, &nr, junk) != 2 || !valid_name(name) || nr < 0 ||
		    nr >= MAX_NR)
			die("%s:%d: not a \"name number\" line", path, lineno);
		for (int i = 0; i < t->n; i++)
			if (strcmp(t->calls[i].name, name) == 0 || t->calls[i].nr == nr)
				die("%s:%d: %s %d repeats a name or number", path, lineno, name, nr);
		if (t->n == MAX_CALLS)
			die("%s: too many lines", path);
		strcpy(t->calls[t->n].name, name);
		t->calls[t->n].nr = nr;
		t->n++;
	}
	fclose(f);
	if (t->n == 0)
		die("%s: empty table", path);
}

void read_names(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int lineno = 0;
	if (!f)
		die("%s: %s", path, strerror(errno));
	moby = calloc(MAX_CALLS, sizeof *moby);
	if (!moby)
		die("out of memory");
	while (fgets(line, sizeof line, f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (!valid_name(line))
			die("%s:%d: not a syscall name", path, lineno);
		if (nmoby && strcmp(moby[nmoby - 1], line) >= 0)
			die("%s:%d: %s is out of order or repeated", path, lineno, line);
		if (nmoby == MAX_CALLS)
			die("%s: too many names", path);
		strcpy(moby[nmoby++], line);
	}
	fclose(f);
	if (nmoby == 0)
		die("%s: no names", path);
}

static int in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

static int in_moby(const char *name)
{
	for (int i = 0; i < nmoby; i++)
		if (strcmp(moby[i], name) == 0)
			return 1;
	return 0;
}

/* isolation.md §6.3 steps 2-3: moby's allow names minus the 35. */
enum cls classify(const char *name)
{
	if (in_list(kill_set, COUNT(kill_set), name))
		return C_KILL;
	if (in_list(enosys_set, COUNT(enosys_set), name))
		return C_ENOSYS;
	if (in_moby(name))
		return C_ALLOW;
	if (in_list(reviewed_set, COUNT(reviewed_set), name))
		return C_REVIEWED;
	return C_NONE;
}

int lookup(const struct table *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->calls[i].name, name) == 0)
			return t->calls[i].nr;
	return -1;
}

int arch_index(const char *name)
{
	for (int i = 0; i < NARCH; i++)
		if (strcmp(arches[i].name, name) == 0)
			return i;
	return -1;
}

/* The policy must be self-consistent before anything is built from it. */
void check_policy(void)
{
	for (size_t i = 0; i < COUNT(reviewed_set); i++)
		if (in_moby(reviewed_set[i]))
			complain("reviewed call %s is also on moby's allow list", reviewed_set[i]);
	for (size_t i = 0; i < COUNT(kill_set); i++)
		if (in_list(enosys_set, COUNT(enosys_set), kill_set[i]))
			complain("%s is in both the kill and the ENOSYS set", kill_set[i]);
	for (int a = 0; a < NARCH; a++) {
		const struct table *t = &pinned[a];
		for (int i = 0; i < t->n; i++)
			if (classify(t->calls[i].name) == C_NONE)
				complain("%s: %s (%d) is neither allowed, denied nor reviewed", t->path,
					 t->calls[i].name, t->calls[i].nr);
		for (size_t i = 0; i < COUNT(kill_set); i++)
			if (lookup(t, kill_set[i]) < 0)
				complain("%s: no number for kill-set call %s", t->path, kill_set[i]);
		for (size_t i = 0; i < COUNT(enosys_set); i++)
			if (lookup(t, enosys_set[i]) < 0)
				complain("%s: no number for ENOSYS-set call %s", t->path, enosys_set[i]);
		if (lookup(t, "socket") < 0 || classify("socket") != C_ALLOW)
			complain("%s: socket must be an allowed call", t->path);
		if (lookup(t, "socketpair") < 0 || classify("socketpair") != C_ALLOW)
			complain("%s: socketpair must be an allowed call", t->path);
		if (lookup(t, "clone") < 0 || classify("clone") != C_ALLOW)
			complain("%s: clone must be an allowed call", t->path);
		if (lookup(t, "ioctl") < 0 || classify("ioctl") != C_ALLOW)
			complain("%s: ioctl must be an allowed call", t->path);
	}
	if (errors)
		die("%d inconsistencies in the seccomp policy", errors);
}

/* The header coverage check (isolation.md §6.3, last paragraph). */
void check_headers(int a, const char *path)
{
	struct table hdr;
	const struct table *t = &pinned[a];
	read_table(&hdr, arches[a].name, path);
	for (int i = 0; i < hdr.n; i++) {
		const char *name = hdr.calls[i].name;
		int nr = lookup(t, name);
		if (nr < 0)
			complain("the %s kernel headers define %s (%d), which %s does not list: review "
				 "it and classify it (allow, deny or the reviewed list of isolation.md §6.3)",
				 arches[a].name, name, hdr.calls[i].nr, t->path);
		else if (nr != hdr.calls[i].nr)
			complain("the %s kernel headers number %s %d, %s says %d", arches[a].name, name,
				 hdr.calls[i].nr, t->path, nr);
		else if (classify(name) == C_NONE)
			complain("the %s kernel headers define %s (%d): neither allowed, denied nor "
				 "reviewed", arches[a].name, name, nr);
	}
	if (!errors)
		printf("seccomp-gen: %s: %d calls in the kernel headers, every one classified\n",
		       arches[a].name, hdr.n);
}


static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

/* isolation.md §6.3 step 4: resolve per architecture, sort, deduplicate. */
void resolve(int a, struct sets *s)
{
	const struct table *t = &pinned[a];
	memset(s, 0, sizeof *s);
	for (int i = 0; i < nmoby; i++) {
		int nr = lookup(t, moby[i]);
		if (nr >= 0 && classify(moby[i]) == C_ALLOW)
			s->allow[s->nallow++] = nr;
	}
	qsort(s->allow, (size_t)s->nallow, sizeof(int), cmp_int);
	int n = 0;
	for (int i = 0; i < s->nallow; i++)
		if (n == 0 || s->allow[n - 1] != s->allow[i])
			s->allow[n++] = s->allow[i];
	s->nallow = n;
	for (size_t i = 0; i < COUNT(kill_set); i++)
		s->kill[i] = lookup(t, kill_set[i]);
	for (size_t i = 0; i < COUNT(enosys_set); i++)
		s->enosys[i] = lookup(t, enosys_set[i]);
	s->socket_nr = lookup(t, "socket");
	s->socketpair_nr = lookup(t, "socketpair");
	s->clone_nr = lookup(t, "clone");
	s->ioctl_nr = lookup(t, "ioctl");
}

/* libseccomp reads a rule's syscall number as the BUILD host's number and
 * translates it by name to each filter architecture, so a number from the
 * aarch64 table would land on the wrong call when built on x86_64. Rules
 * therefore go in by name (the native number, or libseccomp's pseudo
 * number for a call the build host lacks), after checking that libseccomp
 * numbers the call on the target exactly as the pinned table does. */
static void rule(scmp_filter_ctx ctx, int a, uint32_t action, const char *name, unsigned n,
		 const struct scmp_arg_cmp *cmp)
{
	int want = lookup(&pinned[a], name);
	int lib = seccomp_syscall_resolve_name_arch(arches[a].scmp, name);
	int sys = seccomp_syscall_resolve_name(name);
	int rc;
	if (want < 0)
		die("%s: no %s number for %s", pinned[a].path, arches[a].name, name);
	if (lib != want || sys == __NR_SCMP_ERROR)
		die("libseccomp numbers %s %d on %s, %s says %d: libseccomp too old for this call?", name,
		    lib, arches[a].name, pinned[a].path, want);
	rc = seccomp_rule_add_exact_array(ctx, action, sys, n, cmp);
	if (rc < 0)
		die("libseccomp: adding the %s rule for %s on %s: %s",
		    action == SCMP_ACT_ALLOW ? "allow" : "deny", name, arches[a].name, strerror(-rc));
}

/* Address families a workload uses: local sockets, IPv4, IPv6, and
 * netlink for the routing and interface queries the C library makes.
 * Every other family is refused, each a kernel subsystem reachable from
 * the box's user namespace with nothing in it a sandboxed program needs:
 * AF_ALG (Copy Fail, CVE-2026-31431), AF_RXRPC (Dirty Frag,
 * CVE-2026-43284/43500), AF_KEY (xfrm), AF_VSOCK (the hypervisor),
 * AF_PACKET (CVE-2020-14386 and kin), AF_TIPC, AF_SMC, AF_XDP, ...
 * man/kern-seccomp.1 has the table. */
static const unsigned families[] = {1 /* AF_UNIX */, 2 /* AF_INET */, 10 /* AF_INET6 */,
				    AF_NETLINK_NR};
/* Netlink protocols: NETLINK_ROUTE (getaddrinfo, if_nameindex, ip),
 * NETLINK_SOCK_DIAG (ss), NETLINK_AUDIT (login tools log through it),
 * NETLINK_KOBJECT_UEVENT (device monitors). Refused among others:
 * NETLINK_XFRM (configuring IPsec, Dirty Frag's other half),
 * NETLINK_NETFILTER (nf_tables), NETLINK_CRYPTO, NETLINK_GENERIC. */
static const unsigned netlink_protocols[] = {0, 4, 9, 15};

int family_allowed(unsigned family)
{
	for (size_t i = 0; i < COUNT(families); i++)
		if (families[i] == family)
			return 1;
	return 0;
}

int netlink_allowed(unsigned protocol)
{
	for (size_t i = 0; i < COUNT(netlink_protocols); i++)
		if (netlink_protocols[i] == protocol)
			return 1;
	return 0;
}

/* socket(domain, type, protocol) and socketpair(domain, ...): decided on
 * the low 32 bits of domain and protocol (all the kernel reads of them),
 * by exact value, so the allow and deny rules never overlap (libseccomp
 * would let an unconditional rule swallow conditional ones). Values past
 * the spans match no rule: the mode's fall-through, then the kernel's
 * own refusal. */
static void socket_rules(scmp_filter_ctx ctx, int a, const char *name, int allow)
{
	for (unsigned f = 0; f < FAMILY_SPAN; f++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, f);
		if (!family_allowed(f))
			rule(ctx, a, SCMP_ACT_ERRNO(EAFNOSUPPORT), name, 1, &c);
		else if (allow && f != AF_NETLINK_NR)
			rule(ctx, a, SCMP_ACT_ALLOW, name, 1, &c);
	}
	for (unsigned p = 0; p < NETLINK_SPAN; p++) {
		struct scmp_arg_cmp c[2] = {SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_NETLINK_NR),
					    SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, p)};
		if (!netlink_allowed(p))
			rule(ctx, a, SCMP_ACT_ERRNO(EPROTONOSUPPORT), name, 2, c);
		else if (allow)
			rule(ctx, a, SCMP_ACT_ALLOW, name, 2, c);
	}
}

/* Allow rules for every value of the low 32 bits of argument arg but the
 * denied ones, as disjoint prefixes: below (mask, value) split on the next
 * bit until a half holds no denied value; that half is one masked
 * comparison. Two denied values take 34 rules. */
static void allow_all_but(scmp_filter_ctx ctx, int a, const char *name, unsigned arg,
			  const uint32_t *deny, size_t n, uint32_t mask, uint32_t value, int bit)
{
	size_t hits = 0;
	for (size_t i = 0; i < n; i++)
		hits += (deny[i] & mask) == value;
	if (!hits) {
		struct scmp_arg_cmp c = {.arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask,
					 .datum_b = value};
		rule(ctx, a, SCMP_ACT_ALLOW, name, 1, &c);
		return;
	}
	if (bit < 0)
		return;	/* exactly a denied value */
	uint32_t b = 1u << bit;
	allow_all_but(ctx, a, name, arg, deny, n, mask | b, value, bit - 1);
	allow_all_but(ctx, a, name, arg, deny, n, mask | b, value | b, bit - 1);
}

/* An empty program for architecture a that answers fallthrough. */
static scmp_filter_ctx new_program(int a, uint32_t fallthrough)
{
	scmp_filter_ctx ctx = seccomp_init(fallthrough);
	int rc;
	if (!ctx)
		die("libseccomp: seccomp_init failed");
	/* Exactly one architecture per program: the native one seccomp_init
	 * added goes, the target comes in. */
	if ((rc = seccomp_arch_add(ctx, arches[a].scmp)) < 0 && rc != -EEXIST)
		die("libseccomp: adding %s: %s", arches[a].name, strerror(-rc));
	if (seccomp_arch_native() != arches[a].scmp &&
	    (rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE)) < 0)
		die("libseccomp: removing the native arch: %s", strerror(-rc));
	/* isolation.md §6.2 step 1: any other architecture (the i386 int 0x80 path) is
	 * killed; libseccomp applies the same action to the x32 range. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
		die("libseccomp: setting filter attributes: %s", strerror(-rc));
	return ctx;
}

/* One program: the isolation.md §6.2 prologue, then the mode's
 * table (§6.3). */
scmp_filter_ctx build(int a, int mode, const struct sets *s)
{
	uint32_t fallthrough = mode == 0 ? SCMP_ACT_ERRNO(ENOSYS) : mode == 1 ? SCMP_ACT_ALLOW : SCMP_ACT_LOG;
	scmp_filter_ctx ctx = new_program(a, fallthrough);

	for (size_t i = 0; i < COUNT(kill_set); i++)
		rule(ctx, a, SCMP_ACT_KILL_PROCESS, kill_set[i], 0, NULL);
	if (fallthrough != SCMP_ACT_ERRNO(ENOSYS))
		for (size_t i = 0; i < COUNT(enosys_set); i++)
			rule(ctx, a, SCMP_ACT_ERRNO(ENOSYS), enosys_set[i], 0, NULL);

	socket_rules(ctx, a, "socket", fallthrough != SCMP_ACT_ALLOW);
	socket_rules(ctx, a, "socketpair", fallthrough != SCMP_ACT_ALLOW);
	/* clone: any CLONE_NEW* flag in the low 32 bits kills; none allows. */
	for (int bit = 0; bit < 32; bit++) {
		uint64_t m = 1ull << bit;
		if (!(CLONE_NS_FLAGS & m))
			continue;
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, m, m);
		rule(ctx, a, SCMP_ACT_KILL_PROCESS, "clone", 1, &c);
	}
	if (fallthrough != SCMP_ACT_ALLOW) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NS_FLAGS, 0);
		rule(ctx, a, SCMP_ACT_ALLOW, "clone", 1, &c);
	}
	/* ioctl: TIOCSTI and TIOCLINUX on the low 32 bits of the request (all
	 * the kernel reads of it) fail with EPERM; every other request is
	 * allowed. */
	for (size_t i = 0; i < COUNT(tty_denied); i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, tty_denied[i]);
		rule(ctx, a, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &c);
	}
	if (fallthrough != SCMP_ACT_ALLOW)
		allow_all_but(ctx, a, "ioctl", 1, tty_denied, COUNT(tty_denied), 0, 0, 31);

	if (mode != 1) {
		const struct table *t = &pinned[a];
		int done = 0;
		for (int i = 0; i < t->n; i++) {
			const char *name = t->calls[i].name;
			if (classify(name) != C_ALLOW || !strcmp(name, "socket") || !strcmp(name, "socketpair") ||
			    !strcmp(name, "clone") || !strcmp(name, "ioctl"))
				continue;
			rule(ctx, a, SCMP_ACT_ALLOW, name, 0, NULL);
			done++;
		}
		/* socket, socketpair, clone and ioctl are allowed by their argument
		 * rules. */
		if (done + 4 != s->nallow)
			die("%s: %d allow rules for %d allowed numbers", arches[a].name, done + 4, s->nallow);
	}
	return ctx;
}

/* The stacked filter of a box whose root writes to the host as uid 0
 * through idmapped binds (a shifted box with a writable bind, ns.h): no
 * setuid or setgid file can be made, the way systemd's RestrictSUIDSGID=
 * does it. chmod-family modes and O_CREAT/O_TMPFILE creation modes with
 * S_ISUID or S_ISGID fail with EPERM; openat2, whose mode sits in memory
 * seccomp cannot read, fails with ENOSYS (callers fall back to openat).
 * Everything else is the main program's business: this one allows it. */
static const struct {
	const char *name;
	int flags_arg;		/* -1: no open flags, the call always creates or changes a mode */
	int mode_arg;
} sxid_calls[] = {
	{"chmod", -1, 1},   {"fchmod", -1, 1}, {"fchmodat", -1, 2}, {"fchmodat2", -1, 2},
	{"creat", -1, 1},   {"mknod", -1, 1},  {"mknodat", -1, 2},  {"open", 1, 2},
	{"openat", 2, 3},
};

scmp_filter_ctx build_sxid(int a)
{
	static const uint32_t bits[] = {SXID_S_ISUID, SXID_S_ISGID};
	static const uint32_t creating[] = {SXID_O_CREAT, SXID_O_TMPFILE};
	scmp_filter_ctx ctx = new_program(a, SCMP_ACT_ALLOW);
	for (size_t i = 0; i < COUNT(sxid_calls); i++) {
		/* aarch64 has no chmod, creat, mknod or open. */
		if (lookup(&pinned[a], sxid_calls[i].name) < 0)
			continue;
		for (size_t b = 0; b < COUNT(bits); b++) {
			struct scmp_arg_cmp c[2] = {
				{.arg = (unsigned)sxid_calls[i].mode_arg, .op = SCMP_CMP_MASKED_EQ,
				 .datum_a = bits[b], .datum_b = bits[b]},
			};
			if (sxid_calls[i].flags_arg < 0) {
				rule(ctx, a, SCMP_ACT_ERRNO(EPERM), sxid_calls[i].name, 1, c);
				continue;
			}
			for (size_t f = 0; f < COUNT(creating); f++) {
				c[1] = (struct scmp_arg_cmp){.arg = (unsigned)sxid_calls[i].flags_arg,
							     .op = SCMP_CMP_MASKED_EQ,
							     .datum_a = creating[f],
							     .datum_b = creating[f]};
				rule(ctx, a, SCMP_ACT_ERRNO(EPERM), sxid_calls[i].name, 2, c);
			}
		}
	}
	rule(ctx, a, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL);
	return ctx;
}
