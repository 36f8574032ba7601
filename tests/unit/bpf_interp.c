/* See bpf_interp.h. */
#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>

#include "bpf_interp.h"
#include "seccomp_bpf.h"

#define MAXINSNS 4096
#define MEMWORDS 16

int bpf_check(const struct sock_filter *p, unsigned len)
{
	if (len == 0 || len > MAXINSNS)
		return -1;
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &p[pc];
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (f->k % 4 || f->k >= sizeof(struct bpf_seccomp_data))
					return -1;
			} else if (f->code == (BPF_LD | BPF_MEM)) {
				if (f->k >= MEMWORDS)
					return -1;
			} else if (f->code != (BPF_LD | BPF_IMM) && f->code != (BPF_LD | BPF_W | BPF_LEN))
				return -1;
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_MEM) && f->k >= MEMWORDS)
				return -1;
			if (f->code != (BPF_LDX | BPF_IMM) && f->code != (BPF_LDX | BPF_MEM) &&
			    f->code != (BPF_LDX | BPF_W | BPF_LEN))
				return -1;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= MEMWORDS)
				return -1;
			break;
		case BPF_ALU:
			if (BPF_OP(f->code) == BPF_DIV && BPF_SRC(f->code) == BPF_K && f->k == 0)
				return -1;
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				if (f->k >= len - pc - 1)
					return -1;
			} else if (pc + 1u + f->jt >= len || pc + 1u + f->jf >= len)
				return -1;
			break;
		case BPF_RET:
		case BPF_MISC:
			break;
		}
	}
	return BPF_CLASS(p[len - 1].code) == BPF_RET ? 0 : -1;
}

static uint32_t load_word(const struct bpf_seccomp_data *d, uint32_t off)
{
	uint32_t w;
	memcpy(&w, (const char *)d + off, 4);
	return w;
}

uint32_t bpf_run(const struct sock_filter *p, unsigned len, const struct bpf_seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[MEMWORDS] = {0};
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &p[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (f->k % 4 || f->k >= sizeof *d)
					return 0;
				A = load_word(d, f->k);
			} else if (f->code == (BPF_LD | BPF_IMM))
				A = f->k;
			else if (f->code == (BPF_LD | BPF_MEM) && f->k < MEMWORDS)
				A = M[f->k];
			else if (f->code == (BPF_LD | BPF_W | BPF_LEN))
				A = sizeof *d;
			else
				return 0;
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_IMM))
				X = f->k;
			else if (f->code == (BPF_LDX | BPF_MEM) && f->k < MEMWORDS)
				X = M[f->k];
			else if (f->code == (BPF_LDX | BPF_W | BPF_LEN))
				X = sizeof *d;
			else
				return 0;
			break;
		case BPF_ST:
			if (f->k >= MEMWORDS)
				return 0;
			M[f->k] = A;
			break;
		case BPF_STX:
			if (f->k >= MEMWORDS)
				return 0;
			M[f->k] = X;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_MUL: A *= src; break;
			case BPF_DIV: if (!src) return 0; A /= src; break;
			case BPF_MOD: if (!src) return 0; A %= src; break;
			case BPF_AND: A &= src; break;
			case BPF_OR: A |= src; break;
			case BPF_XOR: A ^= src; break;
			case BPF_LSH: A = src < 32 ? A << src : 0; break;
			case BPF_RSH: A = src < 32 ? A >> src : 0; break;
			case BPF_NEG: A = -A; break;
			default: return 0;
			}
			break;
		case BPF_JMP: {
			int taken;
			switch (BPF_OP(f->code)) {
			case BPF_JA:
				pc += f->k;
				continue;
			case BPF_JEQ: taken = A == src; break;
			case BPF_JGT: taken = A > src; break;
			case BPF_JGE: taken = A >= src; break;
			case BPF_JSET: taken = (A & src) != 0; break;
			default: return 0;
			}
			pc += taken ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? A : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		}
	}
	return 0;	/* fell off the end: the kernel never accepts that */
}

static int in(const int *set, int n, uint32_t nr)
{
	for (int i = 0; i < n; i++)
		if ((uint32_t)set[i] == nr)
			return 1;
	return 0;
}

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

uint32_t seccomp_reference(int arch_index, int mode, const struct bpf_seccomp_data *d)
{
	const int *allow = arch_index ? kern_seccomp_allow_aarch64 : kern_seccomp_allow_x86_64;
	const int *kill = arch_index ? kern_seccomp_kill_aarch64 : kern_seccomp_kill_x86_64;
	const int *enosys = arch_index ? kern_seccomp_enosys_aarch64 : kern_seccomp_enosys_x86_64;
	int nallow = arch_index ? (int)(sizeof kern_seccomp_allow_aarch64 / sizeof(int))
				: (int)(sizeof kern_seccomp_allow_x86_64 / sizeof(int));
	uint32_t audit = arch_index ? KERN_SECCOMP_AUDIT_ARCH_aarch64 : KERN_SECCOMP_AUDIT_ARCH_x86_64;
	uint32_t socket_nr = arch_index ? KERN_SECCOMP_SOCKET_aarch64 : KERN_SECCOMP_SOCKET_x86_64;
	uint32_t socketpair_nr = arch_index ? KERN_SECCOMP_SOCKETPAIR_aarch64 : KERN_SECCOMP_SOCKETPAIR_x86_64;
	uint32_t clone_nr = arch_index ? KERN_SECCOMP_CLONE_aarch64 : KERN_SECCOMP_CLONE_x86_64;
	uint32_t ioctl_nr = arch_index ? KERN_SECCOMP_IOCTL_aarch64 : KERN_SECCOMP_IOCTL_x86_64;
	uint32_t nr = (uint32_t)d->nr;

	/* isolation.md §6.2 (common prologue) rule 1, architecture: any other
	 * architecture, i386 int 0x80 included. */
	if (d->arch != audit)
		return SECCOMP_RET_KILL_PROCESS;
	/* §6.2 rule 2, the x32 bit, as libseccomp implements it: every number
	 * from 0x40000000 up (all x32 calls, and the negative ones) is
	 * killed, except -1, the "no system call" a tracer sets, which the
	 * kernel never runs and which falls through to the table below. */
	if (arch_index == 0 && nr >= 0x40000000u && nr != 0xffffffffu)
		return SECCOMP_RET_KILL_PROCESS;
	/* §6.2 rule 3: the kill set. */
	if (in(kill, KERN_SECCOMP_NKILL, nr))
		return SECCOMP_RET_KILL_PROCESS;
	/* §6.2 rule 5: CLONE_NEW* in the low 32 bits of the flags. */
	if (nr == clone_nr && ((uint32_t)d->args[0] & 0x7E020000u))
		return SECCOMP_RET_KILL_PROCESS;
	/* isolation.md §6.1 (the 35 always-denied syscalls): the ENOSYS set,
	 * in every mode. */
	if (in(enosys, KERN_SECCOMP_NENOSYS, nr))
		return RET_ERRNO(ENOSYS);
	/* §6.2 rule 4, the socket families, widened (issue 15, man
	 * kern-seccomp): of the families below 64 only AF_UNIX, AF_INET,
	 * AF_INET6 and AF_NETLINK, and of netlink's 32 protocols only ROUTE,
	 * SOCK_DIAG, AUDIT and KOBJECT_UEVENT; the low 32 bits decide. Larger
	 * values fall through to the mode. */
	if (nr == socket_nr || nr == socketpair_nr) {
		uint32_t fam = (uint32_t)d->args[0], proto = (uint32_t)d->args[2];
		int fam_ok = fam == 1 || fam == 2 || fam == 10 || fam == 16;
		int proto_ok = proto == 0 || proto == 4 || proto == 9 || proto == 15;
		if (fam < 64 && !fam_ok)
			return RET_ERRNO(EAFNOSUPPORT);
		if (fam == 16 && proto < 32 && !proto_ok)
			return RET_ERRNO(EPROTONOSUPPORT);
		if (fam_ok && (fam != 16 || proto < 32))
			return SECCOMP_RET_ALLOW;
		return mode == 0 ? RET_ERRNO(ENOSYS) : mode == 1 ? SECCOMP_RET_ALLOW : SECCOMP_RET_LOG;
	}
	/* box-cli.md §2 (kern box grammar: the workload and the caller's
	 * terminal): no pushing input into a terminal, no console control, on
	 * the low 32 bits of the request. */
	if (nr == ioctl_nr && ((uint32_t)d->args[1] == KERN_SECCOMP_TIOCSTI ||
			       (uint32_t)d->args[1] == KERN_SECCOMP_TIOCLINUX))
		return RET_ERRNO(EPERM);
	/* isolation.md §6.3: the mode's allow set. */
	if (mode == 1 || in(allow, nallow, nr))
		return SECCOMP_RET_ALLOW;
	return mode == 0 ? RET_ERRNO(ENOSYS) : SECCOMP_RET_LOG;
}
