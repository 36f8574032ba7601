/* A small classic-BPF interpreter for seccomp programs, independent of the
 * kernel and of libseccomp: the unit tests and the FZ-8 fuzz target run
 * kern's generated programs in it and compare every verdict with
 * seccomp_reference() (security-tests.md FZ-8). */
#ifndef KERN_BPF_INTERP_H
#define KERN_BPF_INTERP_H

#include <linux/filter.h>
#include <stdint.h>

struct bpf_seccomp_data {
	int32_t nr;
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t args[6];
};

/* The checks the kernel's seccomp loader makes (length, jump targets,
 * aligned in-bounds loads, a return at the end): 0 if accepted. */
int bpf_check(const struct sock_filter *p, unsigned len);
/* Run the program; the SECCOMP_RET_* value it returns. A program that
 * misbehaves at run time yields 0 (SECCOMP_RET_KILL_THREAD). */
uint32_t bpf_run(const struct sock_filter *p, unsigned len, const struct bpf_seccomp_data *d);

/* The verdict isolation.md §6.2 (common prologue and argument rules) and §6.3
 * (modes) ask for, computed from the number sets in seccomp_bpf.h without
 * looking at the programs. arch_index: 0 x86_64, 1 aarch64; mode: 0
 * allowlist, 1 denylist, 2 allowlist-audit. */
uint32_t seccomp_reference(int arch_index, int mode, const struct bpf_seccomp_data *d);

#endif
