/* The generated seccomp programs (build/gen/seccomp_bpf.h): the number
 * sets against the text of isolation.md §6.1 (the 35 always-denied
 * syscalls) and §6.3 (the allowlist mode's allow set) (SC-11), and every
 * program run in a userspace BPF interpreter against the reference
 * verdicts (FZ-8), for every mode and both architectures. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>

#include "bpf_interp.h"
#include "lockdown/lockdown.h"
#include "seccomp_bpf.h"
#include "unit.h"

/* Copied from isolation.md §6.3 (modes: the allowlist), en dashes and all. */
static const char spec_x86_64[] =
	"0–100, 102, 104–133, 135, 137–138, 140–154, 157–164, 170–173, 179, 186–235, 237–245, 247, "
	"251–255, 257–271, 273–278, 280–297, 299–303, 305–307, 309, 312, 314–319, 322, 324–334, 424, 434, "
	"436–441, 443–456";
static const char spec_aarch64[] =
	"0–38, 43–96, 98–103, 107–115, 118–141, 143–216, 220–223, 226–237, 240, 242, 243, 260–264, 266, "
	"267, 269, 272, 274–279, 281, 283–293, 424, 434, 436–441, 443–456";

/* Expand the spec's list into out[]; returns the count, -1 on bad text. */
static int expand(const char *s, int *out, int max)
{
	int n = 0;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			return -1;
		s = end;
		if (!strncmp(s, "–", strlen("–"))) {
			s += strlen("–");
			b = strtol(s, &end, 10);
			if (end == s)
				return -1;
			s = end;
		}
		for (long i = a; i <= b; i++) {
			if (n == max)
				return -1;
			out[n++] = (int)i;
		}
		if (*s == ',')
			s++;
		while (*s == ' ')
			s++;
	}
	return n;
}

static int runs(const int *v, int n)
{
	int r = 0;
	for (int i = 0; i < n; i++)
		r += i == 0 || v[i] != v[i - 1] + 1;
	return r;
}

static int same(const int *a, int na, const int *b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* SC-11: the compiled allow set is the table of isolation.md §6.3. */
TEST(seccomp_allow_set_matches_isolation_md_x86_64)
{
	int spec[1024];
	int n = expand(spec_x86_64, spec, 1024);
	CHECK(n == 317);
	CHECK(runs(spec, n) == 27);
	CHECK(N(kern_seccomp_allow_x86_64) == 317);
	CHECK(runs(kern_seccomp_allow_x86_64, N(kern_seccomp_allow_x86_64)) == 27);
	CHECK(same(spec, n, kern_seccomp_allow_x86_64, N(kern_seccomp_allow_x86_64)));
}

/* SC-11, on aarch64. */
TEST(seccomp_allow_set_matches_isolation_md_aarch64)
{
	int spec[1024];
	int n = expand(spec_aarch64, spec, 1024);
	CHECK(n == 274);
	CHECK(runs(spec, n) == 21);
	CHECK(same(spec, n, kern_seccomp_allow_aarch64, N(kern_seccomp_allow_aarch64)));
}

/* isolation.md §6.1's numbers (the 35 always-denied syscalls), in its
 * order: x86_64 / aarch64. */
static const int kill_x86[24] = {101, 310, 311, 246, 320, 175, 313, 176, 169, 167, 168, 428,
				 429, 430, 431, 432, 433, 442, 321, 272, 308, 165, 166, 155};
static const int kill_arm[24] = {117, 270, 271, 104, 294, 105, 273, 106, 142, 224, 225, 428,
				 429, 430, 431, 432, 433, 442, 280, 97, 268, 40, 39, 41};
static const int enosys_x86[11] = {435, 425, 426, 427, 323, 298, 248, 249, 250, 103, 304};
static const int enosys_arm[11] = {435, 425, 426, 427, 282, 241, 217, 218, 219, 116, 265};

TEST(seccomp_denied_sets_match_isolation_md)
{
	CHECK(seccomp_denied_count == 35);
	CHECK(KERN_SECCOMP_NKILL + KERN_SECCOMP_NENOSYS == 35);
	CHECK(same(kill_x86, 24, kern_seccomp_kill_x86_64, KERN_SECCOMP_NKILL));
	CHECK(same(kill_arm, 24, kern_seccomp_kill_aarch64, KERN_SECCOMP_NKILL));
	CHECK(same(enosys_x86, 11, kern_seccomp_enosys_x86_64, KERN_SECCOMP_NENOSYS));
	CHECK(same(enosys_arm, 11, kern_seccomp_enosys_aarch64, KERN_SECCOMP_NENOSYS));
	/* Disjoint from each other and from the allow set. */
	for (int i = 0; i < 24; i++) {
		for (int j = 0; j < 11; j++)
			CHECK(kill_x86[i] != enosys_x86[j] && kill_arm[i] != enosys_arm[j]);
		for (int j = 0; j < N(kern_seccomp_allow_x86_64); j++)
			CHECK(kern_seccomp_allow_x86_64[j] != kill_x86[i]);
		for (int j = 0; j < N(kern_seccomp_allow_aarch64); j++)
			CHECK(kern_seccomp_allow_aarch64[j] != kill_arm[i]);
	}
	CHECK(KERN_SECCOMP_SOCKET_x86_64 == 41 && KERN_SECCOMP_CLONE_x86_64 == 56);
	CHECK(KERN_SECCOMP_SOCKET_aarch64 == 198 && KERN_SECCOMP_CLONE_aarch64 == 220);
	CHECK(KERN_SECCOMP_AUDIT_ARCH_x86_64 == 0xC000003EU && KERN_SECCOMP_AUDIT_ARCH_aarch64 == 0xC00000B7U);
}

TEST(seccomp_mode_names_round_trip)
{
	CHECK(seccomp_mode_parse("allowlist") == SECCOMP_ALLOWLIST);
	CHECK(seccomp_mode_parse("denylist") == SECCOMP_DENYLIST);
	CHECK(seccomp_mode_parse("allowlist-audit") == SECCOMP_ALLOWLIST_AUDIT);
	CHECK(seccomp_mode_parse("bogus") == -1);
	CHECK(seccomp_mode_parse("") == -1);
	CHECK(seccomp_mode_parse("Allowlist") == -1);
	CHECK(seccomp_mode_parse("allowlist_audit") == -1);
	CHECK(seccomp_mode_parse(NULL) == -1);
	for (int m = 0; m < 3; m++)
		CHECK(seccomp_mode_parse(seccomp_mode_name(m)) == m);
	CHECK_STR(seccomp_mode_name(7), "?");
}

TEST(seccomp_programs_pass_the_kernel_loader_checks)
{
	for (int a = 0; a < KERN_SECCOMP_NARCH; a++)
		for (int m = 0; m < KERN_SECCOMP_NMODE; m++) {
			CHECK(kern_seccomp_progs[a][m].len <= 4096);
			CHECK(bpf_check(kern_seccomp_progs[a][m].insns, kern_seccomp_progs[a][m].len) == 0);
		}
}

static uint32_t run2(int a, int m, uint32_t arch, uint32_t nr, uint64_t a0, uint64_t a1)
{
	struct bpf_seccomp_data d = {.nr = (int32_t)nr, .arch = arch, .args = {a0, a1}};
	return bpf_run(kern_seccomp_progs[a][m].insns, kern_seccomp_progs[a][m].len, &d);
}

static uint32_t run(int a, int m, uint32_t arch, uint32_t nr, uint64_t a0)
{
	return run2(a, m, arch, nr, a0, 0);
}

/* The same with a third argument (socket's protocol). */
static uint32_t run3(int a, int m, uint32_t arch, uint32_t nr, uint64_t a0, uint64_t a2)
{
	struct bpf_seccomp_data d = {.nr = (int32_t)nr, .arch = arch, .args = {a0, 0, a2}};
	return bpf_run(kern_seccomp_progs[a][m].insns, kern_seccomp_progs[a][m].len, &d);
}

static const uint32_t native_audit[2] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64};
#define KILL SECCOMP_RET_KILL_PROCESS
#define ERR(e) (SECCOMP_RET_ERRNO | (e))

/* The behaviours named in the brief, spelled out by hand, so a wrong
 * reference could not hide a wrong program. */
TEST(seccomp_programs_named_verdicts)
{
	for (int m = 0; m < 3; m++) {
		uint32_t x = AUDIT_ARCH_X86_64, r = AUDIT_ARCH_AARCH64;
		/* wrong architecture, the i386 int 0x80 mount (21) included */
		CHECK(run(0, m, AUDIT_ARCH_I386, 21, 0) == KILL);
		CHECK(run(0, m, AUDIT_ARCH_I386, 20, 0) == KILL);
		CHECK(run(0, m, r, 39, 0) == KILL);
		CHECK(run(1, m, x, 39, 0) == KILL);
		CHECK(run(1, m, AUDIT_ARCH_ARM, 21, 0) == KILL);
		/* x32: getpid with the x32 bit */
		CHECK(run(0, m, x, 0x40000000u | 39, 0) == KILL);
		CHECK(run(0, m, x, 0x40000000u | 165, 0) == KILL);
		CHECK(run(0, m, x, 0x7fffffffu, 0) == KILL);
		/* kill set: mount, unshare, bpf, ptrace, new mount API */
		CHECK(run(0, m, x, 165, 0) == KILL && run(1, m, r, 40, 0) == KILL);
		CHECK(run(0, m, x, 272, 0) == KILL && run(1, m, r, 97, 0) == KILL);
		CHECK(run(0, m, x, 321, 0) == KILL && run(0, m, x, 101, 0) == KILL);
		CHECK(run(0, m, x, 428, 0) == KILL && run(1, m, r, 442, 0) == KILL);
		/* ENOSYS set in every mode */
		CHECK(run(0, m, x, 425, 0) == ERR(ENOSYS) && run(0, m, x, 435, 0) == ERR(ENOSYS));
		CHECK(run(1, m, r, 282, 0) == ERR(ENOSYS) && run(1, m, r, 219, 0) == ERR(ENOSYS));
		/* AF_VSOCK on the low 32 bits only */
		CHECK(run(0, m, x, 41, 40) == ERR(EAFNOSUPPORT));
		CHECK(run(0, m, x, 41, 0x100000028ull) == ERR(EAFNOSUPPORT));
		CHECK(run(0, m, x, 41, 0xffffffff00000028ull) == ERR(EAFNOSUPPORT));
		CHECK(run(1, m, r, 198, 40) == ERR(EAFNOSUPPORT));
		/* the families of issue 15: AF_ALG, AF_RXRPC, AF_KEY, AF_PACKET,
		 * AF_TIPC, AF_SMC, AF_XDP, AF_BLUETOOTH, socket and socketpair */
		static const uint64_t fams[] = {38, 33, 15, 17, 30, 43, 44, 31, 0, 45, 63};
		for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
			CHECK(run(0, m, x, 41, fams[i]) == ERR(EAFNOSUPPORT));
			CHECK(run(0, m, x, 53, fams[i] | 0x700000000ull) == ERR(EAFNOSUPPORT));
			CHECK(run(1, m, r, 198, fams[i]) == ERR(EAFNOSUPPORT));
			CHECK(run(1, m, r, 199, fams[i]) == ERR(EAFNOSUPPORT));
		}
		CHECK(run(0, m, x, 41, 2) == SECCOMP_RET_ALLOW);
		CHECK(run(0, m, x, 41, 10) == SECCOMP_RET_ALLOW);
		CHECK(run(0, m, x, 53, 1) == SECCOMP_RET_ALLOW);
		CHECK(run(1, m, r, 198, 1) == SECCOMP_RET_ALLOW);
		CHECK(run(0, m, x, 41, 41) == ERR(EAFNOSUPPORT));
		/* netlink: ROUTE allowed; XFRM (6), NETFILTER (12), CRYPTO (21),
		 * GENERIC (16) refused, on the low 32 bits of the protocol */
		CHECK(run3(0, m, x, 41, 16, 0) == SECCOMP_RET_ALLOW);
		CHECK(run3(0, m, x, 41, 16, 0x500000000ull) == SECCOMP_RET_ALLOW);
		CHECK(run3(1, m, r, 198, 16, 4) == SECCOMP_RET_ALLOW);
		CHECK(run3(0, m, x, 41, 16, 6) == ERR(EPROTONOSUPPORT));
		CHECK(run3(0, m, x, 41, 16, 0xffffffff00000006ull) == ERR(EPROTONOSUPPORT));
		CHECK(run3(1, m, r, 198, 16, 6) == ERR(EPROTONOSUPPORT));
		CHECK(run3(0, m, x, 41, 16, 12) == ERR(EPROTONOSUPPORT));
		CHECK(run3(0, m, x, 41, 16, 21) == ERR(EPROTONOSUPPORT));
		CHECK(run3(0, m, x, 41, 16, 16) == ERR(EPROTONOSUPPORT));
		/* the protocol of other families is not the filter's business */
		CHECK(run3(0, m, x, 41, 2, 6) == SECCOMP_RET_ALLOW);
		/* clone: every CLONE_NEW* flag, alone or hidden among others */
		static const uint32_t flags[] = {0x00020000, 0x02000000, 0x04000000, 0x08000000,
						 0x10000000, 0x20000000, 0x40000000};
		for (int i = 0; i < 7; i++) {
			CHECK(run(0, m, x, 56, flags[i]) == KILL);
			CHECK(run(0, m, x, 56, flags[i] | 0x11ull | 0xffffffff00000000ull) == KILL);
			CHECK(run(1, m, r, 220, flags[i] | 0x100ull) == KILL);
		}
		CHECK(run(0, m, x, 56, 0x01200011) == SECCOMP_RET_ALLOW);	/* fork's flags */
		CHECK(run(0, m, x, 56, 0x003d0f00) == SECCOMP_RET_ALLOW);	/* pthread's */
		CHECK(run(0, m, x, 56, 0x7e02000000000000ull) == SECCOMP_RET_ALLOW);	/* high half only */
		CHECK(run(1, m, r, 220, 0x01200011) == SECCOMP_RET_ALLOW);
		/* ioctl: TIOCSTI (0x5412) and TIOCLINUX (0x541C) on the low 32
		 * bits of the request are EPERM, whatever the fd and the high
		 * half; their neighbours and the usual terminal ioctls run. */
		CHECK(KERN_SECCOMP_IOCTL_x86_64 == 16 && KERN_SECCOMP_IOCTL_aarch64 == 29);
		static const uint64_t pushed[] = {0x5412, 0x541C, 0xffffffff00005412ull, 0x100005412ull,
						  0x800000000000541Cull};
		for (int i = 0; i < 5; i++) {
			CHECK(run2(0, m, x, 16, 0, pushed[i]) == ERR(EPERM));
			CHECK(run2(0, m, x, 16, 2, pushed[i]) == ERR(EPERM));
			CHECK(run2(1, m, r, 29, 7, pushed[i]) == ERR(EPERM));
		}
		static const uint64_t fine[] = {0x5401 /* TCGETS */, 0x5402, 0x5413 /* TIOCGWINSZ */,
						0x5414, 0x540E /* TIOCSCTTY */, 0x5411, 0x541B, 0x541D,
						0x5410, 0x5416, 0x5418, 0x541A, 0x541E, 0x4412, 0x15412,
						0x80045430 /* TIOCGPTN */, 0, 0xffffffff, 0x5412ull << 1};
		for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
			CHECK(run2(0, m, x, 16, 0, fine[i]) == SECCOMP_RET_ALLOW);
			CHECK(run2(1, m, r, 29, 0, fine[i]) == SECCOMP_RET_ALLOW);
		}
		/* The request is argument 1: a TIOCSTI-valued fd is nothing. */
		CHECK(run2(0, m, x, 16, 0x5412, 0x5401) == SECCOMP_RET_ALLOW);
		/* plain allowed calls */
		CHECK(run(0, m, x, 0, 0) == SECCOMP_RET_ALLOW && run(0, m, x, 59, 0) == SECCOMP_RET_ALLOW);
		CHECK(run(1, m, r, 63, 0) == SECCOMP_RET_ALLOW && run(1, m, r, 221, 0) == SECCOMP_RET_ALLOW);
	}
	/* Fall-through: 998, 400, uselib (134) */
	uint32_t fall[3] = {ERR(ENOSYS), SECCOMP_RET_ALLOW, SECCOMP_RET_LOG};
	for (int m = 0; m < 3; m++) {
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 998, 0) == fall[m]);
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 400, 0) == fall[m]);
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 134, 0) == fall[m]);
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 462, 0) == fall[m]);	/* mseal */
		/* a domain past the family span: the kernel's own EAFNOSUPPORT */
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 41, 0x28 | 0x80000000ull) == fall[m]);
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 41, 64) == fall[m]);
		CHECK(run(1, m, AUDIT_ARCH_AARCH64, 238, 0) == fall[m]);	/* migrate_pages */
		/* libseccomp's one exception to the x32 rule: -1, "no call" */
		CHECK(run(0, m, AUDIT_ARCH_X86_64, 0xffffffffu, 0) == fall[m]);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int compare(int a, int m, const struct bpf_seccomp_data *d)
{
	uint32_t got = bpf_run(kern_seccomp_progs[a][m].insns, kern_seccomp_progs[a][m].len, d);
	uint32_t want = seccomp_reference(a, m, d);
	if (got != want)
		printf("# arch %d mode %d: arch 0x%x nr %d a0 0x%llx a1 0x%llx: program 0x%x, reference 0x%x\n",
		       a, m, d->arch, d->nr, (unsigned long long)d->args[0], (unsigned long long)d->args[1],
		       got, want);
	return got == want;
}

/* FZ-8 exhaustively over the numbers that matter and randomly beyond. */
TEST(seccomp_programs_equal_the_reference_table)
{
	static const uint32_t arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64, AUDIT_ARCH_I386,
					  AUDIT_ARCH_ARM, 0, 0xffffffffu};
	static const uint64_t a0s[] = {0, 1, 2, 10, 40, 41, 0x28 | (1ull << 32), 0xffffffffull,
				       0x00020000, 0x10000000, 0x7e020000, 0x01200011, 1ull << 63,
				       0x7e02000000000000ull, 0x80000028ull};
	static const uint32_t odd_nrs[] = {0x3fffffff, 0x40000000, 0x40000027, 0x400001a5, 0x7fffffff,
					   0x80000000, 0xbfffffff, 0xc0000000, 0xfffffffe, 0xffffffff};
	int bad = 0;
	for (int a = 0; a < 2; a++)
		for (int m = 0; m < 3; m++) {
			for (size_t ai = 0; ai < sizeof arches / sizeof arches[0]; ai++) {
				for (uint32_t nr = 0; nr < 1100; nr++)
					for (size_t k = 0; k < sizeof a0s / sizeof a0s[0]; k++) {
						/* Argument 1 a terminal request now and then. */
						uint64_t a1 = rnd();
						if (k % 3 == 0)
							a1 = (a1 & ~0xffffffffull) | (k % 2 ? 0x5412 : 0x541C);
						else if (k % 3 == 1)
							a1 = (a1 & ~0xffffffffull) | (0x5400 | (a1 & 0x3f));
						struct bpf_seccomp_data d = {.nr = (int32_t)nr, .arch = arches[ai],
									     .args = {a0s[k], a1}};
						bad += !compare(a, m, &d);
					}
				for (size_t k = 0; k < sizeof odd_nrs / sizeof odd_nrs[0]; k++) {
					struct bpf_seccomp_data d = {.nr = (int32_t)odd_nrs[k], .arch = arches[ai]};
					bad += !compare(a, m, &d);
				}
			}
			for (int i = 0; i < 200000; i++) {
				uint64_t r = rnd();
				struct bpf_seccomp_data d = {
					.nr = (int32_t)(r & 1 ? r >> 33 : (r >> 8) % 520),
					.arch = r & 2 ? native_audit[a] : (uint32_t)(r >> 32),
					.args = {r & 4 ? rnd() : rnd() & 0xffffffffu,
						 r & 8 ? rnd() : (rnd() << 32) | (0x5400 | (r >> 40 & 0x3f)), rnd()},
				};
				bad += !compare(a, m, &d);
			}
		}
	CHECK(bad == 0);
}

/* The reference itself can fail: a program with one verdict flipped. */
TEST(seccomp_reference_catches_a_flipped_verdict)
{
	static struct sock_filter copy[4096];
	unsigned len = kern_seccomp_progs[0][0].len;
	memcpy(copy, kern_seccomp_progs[0][0].insns, len * sizeof copy[0]);
	/* Turn every KILL_PROCESS return into ALLOW. */
	for (unsigned i = 0; i < len; i++)
		if (BPF_CLASS(copy[i].code) == BPF_RET && copy[i].k == SECCOMP_RET_KILL_PROCESS)
			copy[i].k = SECCOMP_RET_ALLOW;
	struct bpf_seccomp_data d = {.nr = 165, .arch = AUDIT_ARCH_X86_64};
	CHECK(bpf_run(copy, len, &d) == SECCOMP_RET_ALLOW);
	CHECK(seccomp_reference(0, 0, &d) == SECCOMP_RET_KILL_PROCESS);
}
