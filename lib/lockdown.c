/* Placeholder until the lockdown lands: no_new_privs and an allow-all
 * seccomp program, so the rest of the box can be built and tested. It
 * confines NOTHING; the real filter replaces this file. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "diag.h"
#include "lockdown.h"

const int seccomp_denied_count = 35;

int seccomp_mode_parse(const char *s)
{
	if (strcmp(s, "allowlist") == 0)
		return SECCOMP_ALLOWLIST;
	if (strcmp(s, "denylist") == 0)
		return SECCOMP_DENYLIST;
	if (strcmp(s, "allowlist-audit") == 0)
		return SECCOMP_ALLOWLIST_AUDIT;
	return -1;
}

const char *seccomp_mode_name(int mode)
{
	static const char *const names[] = {"allowlist", "denylist", "allowlist-audit"};
	return mode >= 0 && mode <= 2 ? names[mode] : "?";
}

uint64_t caps_default(void)
{
	return 0x00000110bd84efffULL;
}

int caps_adjust(uint64_t *caps, char *const *drop, int ndrop, char *const *add, int nadd,
		const char **bad)
{
	(void)caps; (void)drop; (void)ndrop; (void)add; (void)nadd; (void)bad;
	return 0;
}

int ulimit_parse(const char *spec, struct ulimit_spec *out, const char **why)
{
	(void)spec; (void)out;
	*why = "not built yet";
	return -1;
}

int lockdown_apply(const struct lockdown *ld, int for_exec)
{
	(void)ld;
	(void)for_exec;
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &allow};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		setup_failed("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
		return EXIT_SETUP;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		setup_failed("seccomp(SECCOMP_SET_MODE_FILTER): %s", strerror(errno));
		return EXIT_SETUP;
	}
	return 0;
}

int seccomp_installed(void)
{
	char line[256];
	int on = 0;
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "Seccomp:", 8) == 0)
			on = strstr(line, "2") != NULL;
	fclose(f);
	return on;
}
