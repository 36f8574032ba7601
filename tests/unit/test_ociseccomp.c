/* lib/ociruntime/seccomp.c: a config's profile read by kern and compiled
 * by libseccomp, checked against libseccomp's program for the same rules
 * written as its own calls (what runc makes of that JSON) in the userspace
 * BPF interpreter, verdict for verdict, over the profile's system calls
 * and argument values around each comparison: the JSON is read as runc
 * reads it (operators, value/valueTwo, repeated indexes, errnoRet). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_interp.h"
#include "ociruntime/seccomp.h"
#include "unit.h"

/* libseccomp's program for a profile written as its calls: what runc
 * does with the same JSON. */
struct ref_rule {
	const char *name;
	uint32_t action;
	int n;
	struct scmp_arg_cmp a[2];
};

static struct sock_filter *ref_prog(uint32_t dflt, const struct ref_rule *r, int nr, unsigned *len)
{
	scmp_filter_ctx ctx = seccomp_init(dflt);
	if (!ctx)
		return NULL;
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (int i = 0; i < nr; i++) {
		int sys = seccomp_syscall_resolve_name(r[i].name);
		if (sys != __NR_SCMP_ERROR && r[i].action != dflt)
			seccomp_rule_add_array(ctx, r[i].action, sys, (unsigned)r[i].n, r[i].a);
	}
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 0);
	int fd = memfd_create("ref", MFD_CLOEXEC);
	seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	off_t size = lseek(fd, 0, SEEK_END);
	struct sock_filter *p = malloc((size_t)size);
	if (!p || pread(fd, p, (size_t)size, 0) != size) {
		free(p);
		close(fd);
		return NULL;
	}
	close(fd);
	*len = (unsigned)(size / (off_t)sizeof *p);
	return p;
}

static uint32_t verdict(const struct sock_filter *p, unsigned n, int nr, uint64_t a0, uint64_t a1)
{
	struct bpf_seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64, .args = {a0, a1}};
	return bpf_run(p, n, &d);
}

TEST(oci_seccomp_matches_libseccomp)
{
#if !defined(__x86_64__)
	return;
#else
	/* ERRNO 38 by default; reads allowed; mkdir EACCES; personality
	 * allowed for two values (one repeated index: any); socket allowed
	 * whatever its args (the rule without args decides alone); kill
	 * allowed below 10 but EPERM below 5 (the strictest match); clone allowed unless a namespace flag
	 * is set (MASKED_EQ); kill allowed below signal 10, on 64 bits. */
	static const char js[] =
		"{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 38,"
		" \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\", \"SCMP_ARCH_X32\"],"
		" \"syscalls\": ["
		"  {\"names\": [\"read\", \"write\", \"no_such_call\"], \"action\": \"SCMP_ACT_ALLOW\"},"
		"  {\"names\": [\"mkdir\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13},"
		"  {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
		"    {\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"},"
		"    {\"index\": 0, \"value\": 8, \"op\": \"SCMP_CMP_EQ\"}]},"
		"  {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 22, \"args\": ["
		"    {\"index\": 0, \"value\": 16, \"op\": \"SCMP_CMP_EQ\"},"
		"    {\"index\": 2, \"value\": 9, \"op\": \"SCMP_CMP_EQ\"}]},"
		"  {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ALLOW\"},"
		"  {\"names\": [\"clone\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
		"    {\"index\": 0, \"value\": 2114060288, \"op\": \"SCMP_CMP_MASKED_EQ\"}]},"
		"  {\"names\": [\"kill\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
		"    {\"index\": 1, \"value\": 10, \"op\": \"SCMP_CMP_LT\"}]},"
		"  {\"names\": [\"kill\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1, \"args\": ["
		"    {\"index\": 1, \"value\": 5, \"op\": \"SCMP_CMP_LT\"}]},"
		"  {\"names\": [\"tkill\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
		"    {\"index\": 1, \"value\": 10, \"op\": \"SCMP_CMP_GE\"}]},"
		"  {\"names\": [\"getpriority\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
		"    {\"index\": 0, \"value\": 4294967297, \"op\": \"SCMP_CMP_GT\"}]},"
		"  {\"names\": [\"setpriority\"], \"action\": \"SCMP_ACT_KILL_PROCESS\", \"args\": ["
		"    {\"index\": 0, \"value\": 3, \"op\": \"SCMP_CMP_LE\"},"
		"    {\"index\": 1, \"value\": 7, \"op\": \"SCMP_CMP_NE\"}]}"
		"]}";
	const uint32_t dflt = SCMP_ACT_ERRNO(38);
	const struct ref_rule rr[] = {
		{"read", SCMP_ACT_ALLOW, 0, {{0}}},
		{"write", SCMP_ACT_ALLOW, 0, {{0}}},
		{"mkdir", SCMP_ACT_ERRNO(13), 0, {{0}}},
		{"personality", SCMP_ACT_ALLOW, 1, {SCMP_A0_64(SCMP_CMP_EQ, 0)}},
		{"personality", SCMP_ACT_ALLOW, 1, {SCMP_A0_64(SCMP_CMP_EQ, 8)}},
		{"socket", SCMP_ACT_ERRNO(22), 2, {SCMP_A0_64(SCMP_CMP_EQ, 16), SCMP_A2_64(SCMP_CMP_EQ, 9)}},
		{"socket", SCMP_ACT_ALLOW, 0, {{0}}},
		{"clone", SCMP_ACT_ALLOW, 1, {SCMP_A0_64(SCMP_CMP_MASKED_EQ, 2114060288, 0)}},
		{"kill", SCMP_ACT_ALLOW, 1, {SCMP_A1_64(SCMP_CMP_LT, 10)}},
		{"kill", SCMP_ACT_ERRNO(1), 1, {SCMP_A1_64(SCMP_CMP_LT, 5)}},
		{"tkill", SCMP_ACT_ALLOW, 1, {SCMP_A1_64(SCMP_CMP_GE, 10)}},
		{"getpriority", SCMP_ACT_ALLOW, 1, {SCMP_A0_64(SCMP_CMP_GT, 4294967297ULL)}},
		{"setpriority", SCMP_ACT_KILL_PROCESS, 2, {SCMP_A0_64(SCMP_CMP_LE, 3), SCMP_A1_64(SCMP_CMP_NE, 7)}},
	};
	struct sock_filter *mine, *ref;
	unsigned n = 0, rn = 0;
	char why[256];
	CHECK(oci_seccomp_compile(js, sizeof js - 1, &mine, &n, why, sizeof why) == 0);
	CHECK(bpf_check(mine, n) == 0);
	CHECK((ref = ref_prog(dflt, rr, (int)(sizeof rr / sizeof rr[0]), &rn)) != NULL);
	const int nrs[] = {__NR_read, __NR_write, __NR_mkdir, __NR_personality, __NR_socket, __NR_clone, __NR_kill,
			   __NR_tkill, __NR_getpriority, __NR_setpriority, __NR_seccomp, __NR_open, __NR_ptrace, 0x40000000};
	const uint64_t vals[] = {0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 16, 0x10000, 0x20000000, 0x7e020000,
				 4294967296ULL, 4294967297ULL, 4294967298ULL, 0x100000009ULL, UINT64_MAX};
	int diffs = 0;
	for (size_t i = 0; i < sizeof nrs / sizeof nrs[0]; i++)
		for (size_t a = 0; a < sizeof vals / sizeof vals[0]; a++)
			for (size_t b = 0; b < sizeof vals / sizeof vals[0]; b++) {
				uint32_t m = verdict(mine, n, nrs[i], vals[a], vals[b]);
				uint32_t r = verdict(ref, rn, nrs[i], vals[a], vals[b]);
				/* socket's third argument: the same values. */
				struct bpf_seccomp_data d = {.nr = nrs[i], .arch = AUDIT_ARCH_X86_64,
							     .args = {vals[a], vals[b], vals[b]}};
				uint32_t m3 = bpf_run(mine, n, &d), r3 = bpf_run(ref, rn, &d);
				if ((m != r || m3 != r3) && diffs++ < 5)
					fprintf(stderr, "# nr %d args %#llx %#llx: kern %#x/%#x libseccomp %#x/%#x\n",
						nrs[i], (unsigned long long)vals[a], (unsigned long long)vals[b], m,
						m3, r, r3);
			}
	CHECK(diffs == 0);
	/* Another architecture is killed, x32's numbers too; seccomp(2)
	 * stays allowed for kern's own filter. */
	struct bpf_seccomp_data d = {.nr = 3, .arch = AUDIT_ARCH_I386};
	CHECK(bpf_run(mine, n, &d) == SECCOMP_RET_KILL_PROCESS);
	CHECK(verdict(mine, n, 0x40000000 | __NR_read, 0, 0) == SECCOMP_RET_KILL_PROCESS);
	CHECK(verdict(mine, n, __NR_seccomp, 0, 0) == SECCOMP_RET_ALLOW);
	CHECK(verdict(mine, n, __NR_read, 0, 0) == SECCOMP_RET_ALLOW);
	CHECK(verdict(mine, n, __NR_open, 0, 0) == (SECCOMP_RET_ERRNO | 38));
	CHECK(verdict(mine, n, __NR_kill, 0, 4) == (SECCOMP_RET_ERRNO | 1));
	CHECK(verdict(mine, n, __NR_kill, 0, 7) == SECCOMP_RET_ALLOW);
	/* clone's rule has no valueTwo: 0, so a clone without namespace
	 * flags is allowed (Docker's default profile reads so). */
	CHECK(verdict(mine, n, __NR_clone, 0x11, 0) == SECCOMP_RET_ALLOW);
	CHECK(verdict(mine, n, __NR_clone, 0x10000000, 0) == (SECCOMP_RET_ERRNO | 38));
	free(mine);
	free(ref);
#endif
}

TEST(oci_seccomp_refuses_what_kern_cannot_do)
{
	struct sock_filter *p;
	unsigned n;
	char why[256];
	static const char *const bad[][2] = {
		{"{\"defaultAction\": \"SCMP_ACT_TRACE\"}",
		 "linux.seccomp.defaultAction: SCMP_ACT_TRACE is not supported (kern runs no tracer and no seccomp agent)"},
		{"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
		 "\"SCMP_ACT_NOTIFY\"}]}",
		 "linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY is not supported (kern runs no tracer and no "
		 "seccomp agent)"},
		{"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"]}",
		 "linux.seccomp.flags is not supported"},
		{"{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 5000}",
		 "linux.seccomp.defaultAction: an errno return above 4095 is not supported"},
		{"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
		 "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
		 "linux.seccomp.syscalls[0].args[0].index must be an integer from 0 to 5"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(oci_seccomp_compile(bad[i][0], strlen(bad[i][0]), &p, &n, why, sizeof why) < 0);
		CHECK_STR(why, bad[i][1]);
	}
	/* Too many rules to fit the kernel's 4096 instructions. */
	size_t cap = 1 << 20, o = 0;
	char *big = malloc(cap);
	o += (size_t)snprintf(big + o, cap - o, "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [");
	for (int k = 0; k < 1500; k++)
		o += (size_t)snprintf(big + o, cap - o, "%s{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", "
				      "\"args\": [{\"index\": 0, \"value\": %d, \"op\": \"SCMP_CMP_EQ\"}, "
				      "{\"index\": 1, \"value\": %d, \"op\": \"SCMP_CMP_GT\"}]}", k ? "," : "", k, k);
	o += (size_t)snprintf(big + o, cap - o, "]}");
	CHECK(oci_seccomp_compile(big, o, &p, &n, why, sizeof why) < 0);
	CHECK_STR(why, "linux.seccomp compiles to more than 4096 instructions");
	free(big);
}
