/* The last steps before the workload, in the order of isolation.md §2.7:
 * rlimits (29), AppArmor (30), capabilities and the user (31), then
 * no_new_privs and the seccomp filter (32). Runs in a single-threaded
 * process (kern's PID 1 after fork, or `kern exec`); nothing here forks or
 * executes anything, and nothing outside kern runs before the filter. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <unistd.h>
#ifdef KERN_SC12_CANARY
#include <sys/wait.h>
#endif

#include "base/diag.h"
#include "lockdown/steps.h"

static int refuse(int for_exec, const char *why)
{
	if (for_exec) {
		diag_line(0, "kern: exec: %s - refusing to run", why);
		return EXIT_NOEXEC;
	}
	setup_failed("%s", why);
	return EXIT_SETUP;
}

/* box-cli.md §2.1: ^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,127}$ */
static int valid_profile(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n > 128 || p[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* Open /proc/<rel> for writing through a handle proved to be procfs, the
 * file too: a /proc the box's root redirects (a symlink, a directory of
 * its own) never receives what kern writes (runc CVE-2025-52881). EXDEV
 * when something on the way is not procfs. */
static int proc_open_write(const char *rel)
{
	struct statfs sf;
	int proc = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd = -1;
	if (proc < 0)
		return -1;
	if (fstatfs(proc, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC)
		fd = openat(proc, rel, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	else
		errno = EXDEV;
	int e = errno;
	close(proc);
	if (fd >= 0 && (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)) {
		close(fd);
		fd = -1;
		e = EXDEV;
	}
	errno = e;
	return fd;
}

/* Ask AppArmor to switch to the profile at the next execve. */
static int apparmor_exec(const char *profile, char *why)
{
	static const char *const attrs[] = {"/proc/self/attr/apparmor/exec", "/proc/self/attr/exec"};
	char cmd[160];
	int len, err = 0;
	const char *path = attrs[0];
	if (!valid_profile(profile)) {
		snprintf(why, WHY_MAX, "AppArmor profile name '%.140s' is not valid", profile);
		return -1;
	}
	len = snprintf(cmd, sizeof cmd, "exec %s", profile);
	for (size_t i = 0; i < 2; i++) {
		int fd = proc_open_write(attrs[i] + strlen("/proc/"));
		path = attrs[i];
		if (fd < 0) {
			err = errno;
			/* The LSM-specific file is newer (5.1); the generic one
			 * is the fallback. */
			if (err == ENOENT && i == 0)
				continue;
			break;
		}
		ssize_t w = write(fd, cmd, (size_t)len);
		err = w == len ? 0 : w < 0 ? errno : EIO;
		close(fd);
		break;
	}
	if (err == 0)
		return 0;
	/* EINVAL from the generic file: no LSM took the request, which is
	 * what a kernel without AppArmor answers. */
	snprintf(why, WHY_MAX, "cannot enter AppArmor profile '%s': write %s: %s%s", profile, path,
		 err == EXDEV ? "not on procfs" : strerror(err),
		 err == EINVAL || err == ENOENT ? " (AppArmor is not enabled here, or the profile is "
						  "not loaded)" : "");
	return -1;
}

#ifdef KERN_SC12_CANARY
/* Test-only (tests/helpers, never in kern): runs a program that is not
 * kern before the filter is installed, exactly what the SC-12 guard must
 * catch. Built only into build/helpers/lockdown-run-canary. */
static void sc12_canary(void)
{
	pid_t p = fork();
	if (p == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}
#endif

int lockdown_apply(const struct lockdown *ld, int for_exec)
{
	char why[WHY_MAX] = "";
	if (ld->nulimits < 0 || ld->nulimits > LOCKDOWN_MAX_ULIMITS || ld->ngroups < 0 ||
	    ld->ngroups > LOCKDOWN_MAX_GROUPS)
		return refuse(for_exec, "lockdown: bad ulimit or group count");
	if (ulimits_apply(ld->ulimits, ld->nulimits, why) < 0)
		return refuse(for_exec, why);
	/* Before any uid change: entering a profile may need privilege. */
	if (ld->apparmor && apparmor_exec(ld->apparmor, why) < 0)
		return refuse(for_exec, why);
	struct lockdown eff = *ld;
	if (eff.restrict_sxid)
		eff.caps &= ~LOCKDOWN_SXID_CAPS;
	if (caps_apply(&eff, why) < 0)
		return refuse(for_exec, why);
#ifdef KERN_SC12_CANARY
	sc12_canary();
#endif
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(why, sizeof why, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
		return refuse(for_exec, why);
	}
	if (ld->host_ids && caps_verify_host(ld, why) < 0)
		return refuse(for_exec, why);
	/* The config's program (kern-oci) first: it lets seccomp(2) through
	 * to the filters below. */
	if (ld->extra_len && lockdown_seccomp_load_extra(ld->extra_bpf, ld->extra_len, why) < 0)
		return refuse(for_exec, why);
	/* The stacked filter first: loading it needs seccomp(2), which the
	 * main program need not allow. */
	if (ld->restrict_sxid && lockdown_seccomp_load_sxid(why) < 0)
		return refuse(for_exec, why);
	if (lockdown_seccomp_load(ld->seccomp_mode, why) < 0)
		return refuse(for_exec, why);
	/* The promise of isolation.md §2.7 step 32: never report success
	 * unless this very process is filtered. */
	if (!seccomp_installed())
		return refuse(for_exec, "the seccomp filter is not installed in this process");
	return 0;
}
