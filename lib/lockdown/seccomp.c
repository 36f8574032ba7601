/* Seccomp (isolation.md §6): the programs are built once, at build time,
 * by tools/seccomp-gen with libseccomp (build/gen/seccomp_bpf.h); a box
 * only loads the one for its mode and architecture, with a single system
 * call. No rule is compiled per box. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lockdown/steps.h"
#include "seccomp_bpf.h"

#if defined(__x86_64__)
#define NATIVE 0
#elif defined(__aarch64__)
#define NATIVE 1
#else
/* cppcheck-suppress preprocessorErrorDirective */
#error "kern's seccomp programs exist for x86_64 and aarch64 only"
#endif

/* 24 killed + 11 ENOSYS (isolation.md §6.1). */
const int seccomp_denied_count = 35;

static const char *const mode_names[] = {"allowlist", "denylist", "allowlist-audit"};

int seccomp_mode_parse(const char *s)
{
	if (!s)
		return -1;
	for (int m = 0; m < 3; m++)
		if (strcmp(s, mode_names[m]) == 0)
			return m;
	return -1;
}

const char *seccomp_mode_name(int mode)
{
	return mode >= 0 && mode < 3 ? mode_names[mode] : "?";
}

int lockdown_seccomp_load(int mode, char *why)
{
	if (mode < 0 || mode >= KERN_SECCOMP_NMODE) {
		snprintf(why, WHY_MAX, "seccomp: unknown mode %d", mode);
		return -1;
	}
	struct sock_fprog prog = {
		.len = kern_seccomp_progs[NATIVE][mode].len,
		.filter = (struct sock_filter *)kern_seccomp_progs[NATIVE][mode].insns,
	};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
		return 0;
	/* seccomp(2) arrived in 3.17; prctl does the same before it. */
	if (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
		return 0;
	snprintf(why, WHY_MAX, "seccomp(SECCOMP_SET_MODE_FILTER, %s): %s", mode_names[mode],
		 strerror(errno));
	return -1;
}

int lockdown_seccomp_load_sxid(char *why)
{
	struct sock_fprog prog = {
		.len = kern_seccomp_sxid_progs[NATIVE].len,
		.filter = (struct sock_filter *)kern_seccomp_sxid_progs[NATIVE].insns,
	};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ||
	    (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0))
		return 0;
	snprintf(why, WHY_MAX, "seccomp(SECCOMP_SET_MODE_FILTER, no setuid/setgid files): %s",
		 strerror(errno));
	return -1;
}

int lockdown_seccomp_load_extra(const struct sock_filter *p, unsigned n, char *why)
{
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = (struct sock_filter *)p};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ||
	    (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0))
		return 0;
	snprintf(why, WHY_MAX, "seccomp(SECCOMP_SET_MODE_FILTER, the --seccomp-bpf program of %u instructions): %s",
		 n, strerror(errno));
	return -1;
}

int seccomp_prog_read(const char *path, struct sock_filter **p, unsigned *n)
{
	struct stat st;
	*p = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof **p || st.st_size > (off_t)(4096 * sizeof **p)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	*p = malloc((size_t)st.st_size);
	ssize_t got = *p ? read(fd, *p, (size_t)st.st_size) : -1;
	int e = errno;
	close(fd);
	if (got != st.st_size) {
		free(*p);
		*p = NULL;
		errno = got < 0 ? e : EINVAL;
		return -1;
	}
	*n = (unsigned)(st.st_size / (off_t)sizeof **p);
	return 0;
}

int seccomp_installed(void)
{
	/* 2 = SECCOMP_MODE_FILTER for this very thread; needs no /proc. */
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == SECCOMP_MODE_FILTER;
}
