/* The stacked no-setuid/setgid-files program (kern_seccomp_sxid_progs in
 * build/gen/seccomp_bpf.h; lockdown.h restrict_sxid), run in the
 * userspace BPF interpreter against a reference written from the system
 * call table by hand: every mode-setting or creating call with S_ISUID or
 * S_ISGID fails with EPERM, openat2 with ENOSYS, the rest is allowed. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdint.h>

#include "bpf_interp.h"
#include "seccomp_bpf.h"
#include "unit.h"

#define ALLOW SECCOMP_RET_ALLOW
#define KILL SECCOMP_RET_KILL_PROCESS
#define ERR(e) (SECCOMP_RET_ERRNO | (e))

/* x86_64 and aarch64 numbers; -1 where the architecture lacks the call.
 * flags < 0: the call sets or creates with a mode unconditionally. */
static const struct {
	int nr[2];
	int flags_arg, mode_arg;
} calls[] = {
	{{90, -1}, -1, 1},	/* chmod */
	{{91, 52}, -1, 1},	/* fchmod */
	{{268, 53}, -1, 2},	/* fchmodat */
	{{452, 452}, -1, 2},	/* fchmodat2 */
	{{85, -1}, -1, 1},	/* creat */
	{{133, -1}, -1, 1},	/* mknod */
	{{259, 33}, -1, 2},	/* mknodat */
	{{2, -1}, 1, 2},	/* open */
	{{257, 56}, 2, 3},	/* openat */
};
#define OPENAT2 437
static const uint32_t audit[2] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64};

static uint32_t sxid_run(int a, const struct bpf_seccomp_data *d)
{
	return bpf_run(kern_seccomp_sxid_progs[a].insns, kern_seccomp_sxid_progs[a].len, d);
}

static uint32_t reference(int a, const struct bpf_seccomp_data *d)
{
	if (d->arch != audit[a])
		return KILL;
	/* x32 numbers carry bit 30: libseccomp treats them as another ABI. */
	if (a == 0 && (d->nr & 0x40000000) && d->nr != -1)
		return KILL;
	if (d->nr == OPENAT2)
		return ERR(ENOSYS);
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		if (calls[i].nr[a] != d->nr)
			continue;
		uint32_t mode = (uint32_t)d->args[calls[i].mode_arg];
		if (!(mode & 06000))
			return ALLOW;
		if (calls[i].flags_arg < 0)
			return ERR(EPERM);
		uint32_t flags = (uint32_t)d->args[calls[i].flags_arg];
		return flags & (0100 | 020000000) ? ERR(EPERM) : ALLOW;
	}
	return ALLOW;
}

TEST(seccomp_sxid_program_passes_the_kernel_loader_checks)
{
	for (int a = 0; a < KERN_SECCOMP_NARCH; a++) {
		CHECK(kern_seccomp_sxid_progs[a].len <= 4096);
		CHECK(bpf_check(kern_seccomp_sxid_progs[a].insns, kern_seccomp_sxid_progs[a].len) == 0);
	}
}

static uint32_t V(int a, uint32_t arch, int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct bpf_seccomp_data d = {.nr = nr, .arch = arch, .args = {a0, a1, a2, a3}};
	return sxid_run(a, &d);
}

/* OT-5's calls, spelled out. */
TEST(seccomp_sxid_program_named_verdicts)
{
	uint32_t x = AUDIT_ARCH_X86_64, r = AUDIT_ARCH_AARCH64;
	CHECK(V(0, x, 90, 0, 04755, 0, 0) == ERR(EPERM));		/* chmod u+s */
	CHECK(V(0, x, 90, 0, 02755, 0, 0) == ERR(EPERM));		/* chmod g+s */
	CHECK(V(0, x, 90, 0, 0755, 0, 0) == ALLOW);
	CHECK(V(0, x, 90, 0, 01777, 0, 0) == ALLOW);			/* sticky is fine */
	CHECK(V(0, x, 91, 3, 0x100000000ull | 04000, 0, 0) == ERR(EPERM));	/* high bits ignored */
	CHECK(V(0, x, 91, 3, 0x100000000ull | 0755, 0, 0) == ALLOW);
	CHECK(V(1, r, 52, 3, 06755, 0, 0) == ERR(EPERM));		/* aarch64 fchmod */
	CHECK(V(0, x, 452, (uint64_t)-100, 0, 04755, 0) == ERR(EPERM));		/* fchmodat2 */
	CHECK(V(1, r, 53, (uint64_t)-100, 0, 02644, 0) == ERR(EPERM));		/* fchmodat */
	CHECK(V(0, x, 257, (uint64_t)-100, 0, 0101, 04755) == ERR(EPERM));	/* openat O_CREAT|O_WRONLY */
	CHECK(V(0, x, 257, (uint64_t)-100, 0, 020200001, 02755) == ERR(EPERM));	/* O_TMPFILE */
	CHECK(V(0, x, 257, (uint64_t)-100, 0, 0, 04755) == ALLOW);		/* no creation: mode unused */
	CHECK(V(0, x, 257, (uint64_t)-100, 0, 0101, 0644) == ALLOW);
	CHECK(V(1, r, 56, (uint64_t)-100, 0, 0101, 04755) == ERR(EPERM));
	CHECK(V(0, x, 2, 0, 0100, 04755, 0) == ERR(EPERM));		/* open */
	CHECK(V(0, x, 85, 0, 06755, 0, 0) == ERR(EPERM));		/* creat */
	CHECK(V(0, x, 133, 0, 0104755, 0, 0) == ERR(EPERM));		/* mknod S_IFREG|04755 */
	CHECK(V(1, r, 33, (uint64_t)-100, 0, 0102755, 0) == ERR(EPERM));	/* mknodat */
	CHECK(V(0, x, 259, (uint64_t)-100, 0, 0100644, 0) == ALLOW);
	CHECK(V(0, x, OPENAT2, (uint64_t)-100, 0, 0, 24) == ERR(ENOSYS));
	CHECK(V(1, r, OPENAT2, (uint64_t)-100, 0, 0, 24) == ERR(ENOSYS));
	CHECK(V(0, x, 0, 0, 04755, 04755, 04755) == ALLOW);		/* read */
	CHECK(V(0, x, 92, 0, 0, 0, 0) == ALLOW);			/* chown */
	CHECK(V(0, AUDIT_ARCH_I386, 15, 0, 04755, 0, 0) == KILL);	/* i386 chmod */
	CHECK(V(0, x, 0x40000000 | 90, 0, 04755, 0, 0) == KILL);	/* x32 chmod */
	CHECK(V(1, x, 90, 0, 04755, 0, 0) == KILL);
}

static uint64_t state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* Every call number with interesting and random modes and flags. */
TEST(seccomp_sxid_program_equals_the_reference)
{
	static const uint64_t modes[] = {0, 0644, 0755, 01777, 02000, 04000, 06755, 0104755,
					 0x100000000ull | 04000, 0xfffffffffffff3ffull};
	static const uint64_t flags[] = {0, 1, 0100, 0101, 0200, 020000000, 020200000, 020200002,
					 0x100000000ull | 0100, 0xffffffffffbfffbfull};
	int bad = 0;
	for (int a = 0; a < 2; a++) {
		for (int nr = 0; nr < 1100; nr++)
			for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
				for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
					struct bpf_seccomp_data d = {.nr = nr, .arch = audit[a]};
					/* The mode and the flags in every argument a call could
					 * read them from. */
					d.args[0] = rnd();
					d.args[1] = m & 1 ? modes[m] : flags[f];
					d.args[2] = m & 1 ? flags[f] : modes[m];
					d.args[3] = modes[m];
					bad += sxid_run(a, &d) != reference(a, &d);
				}
		for (int i = 0; i < 200000; i++) {
			uint64_t r = rnd();
			struct bpf_seccomp_data d = {
				.nr = (int32_t)(r & 1 ? r >> 33 : (r >> 8) % 520),
				.arch = r & 2 ? audit[a] : (uint32_t)(r >> 32),
				.args = {rnd(), rnd(), rnd(), rnd()},
			};
			bad += sxid_run(a, &d) != reference(a, &d);
		}
	}
	CHECK(bad == 0);
}
