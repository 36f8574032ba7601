#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxns.h"
#include "diag.h"
#include "fdutil.h"
#include "init.h"
#include "lockdown.h"
#include "report.h"

const int init_forwarded[6] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* The workload is spawned, not forked: posix_spawn shares init's memory
 * until the exec (CLONE_VM|CLONE_VFORK), so no page tables are copied,
 * which is most of what a fork costs. It starts with default dispositions
 * for the signals init handles and with the mask kern found; the three
 * sanctioned pipes are close-on-exec. */
static pid_t spawn_workload(const struct run_config *rc, const sigset_t *orig)
{
	extern char **environ;
	posix_spawnattr_t attr;
	sigset_t dfl;
	pid_t child;
	init_signal_set(&dfl);
	if (posix_spawnattr_init(&attr) != 0)
		step_fail("posix_spawnattr_init: %s", strerror(ENOMEM));
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&attr, orig);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	/* posix_spawnp searches the PATH of environ: the box's, never the
	 * host's. init needs the host environment no more. */
	environ = rc->env;
	int err = posix_spawnp(&child, rc->argv[0], NULL, &attr, rc->argv, rc->env);
	posix_spawnattr_destroy(&attr);
	/* EAGAIN is the clone failing (no task left), not the command. */
	if (err == EAGAIN)
		step_fail("spawn the workload: %s", strerror(err));
	if (err)
		exec_fail(rc->argv[0], err);
	return child;
}

void init_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (size_t i = 0; i < sizeof init_forwarded / sizeof init_forwarded[0]; i++)
		sigaddset(set, init_forwarded[i]);
}

void forward_until_sigchld(pid_t child, const sigset_t *set)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);
		if (sig == SIGCHLD)
			return;
		/* Forward only what the supervisor (or kern stop) sent. */
		if (sig > 0 && si.si_code != SI_KERNEL)
			kill(child, sig);
	}
}

static void __attribute__((noreturn)) reap_until(pid_t child, int report_fd)
{
	sigset_t set;
	init_signal_set(&set);
	for (;;) {
		forward_until_sigchld(child, &set);
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p != child)
				continue;
			if (report_fd >= 0) {
				struct init_report r = {.status = st};
				(void)write_all(report_fd, &r, sizeof r);
			}
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	}
}

void init_run(const struct run_config *rc, int report_fd, int alive_fd)
{
	sigset_t block, orig;
	int keep[3] = {alive_fd, diag_status_fd, report_fd};

	alive_remember(alive_fd);
	/* Before the workload exists: nothing in the box may open init's
	 * memory or descriptors (/proc/1/mem, /proc/1/fd, pidfd_getfd), or
	 * it could clear init's parent-death signal and outlive a killed
	 * supervisor. Then init's namespaces go to the supervisor, for kern
	 * exec (boxns.h). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		step_fail("prctl(PR_SET_DUMPABLE, 0): %s", strerror(errno));
	if (report_fd >= 0 && box_ns_send(report_fd) < 0)
		step_fail("cannot hand the box's namespaces to the supervisor: %s", strerror(errno));
	/* 29-32: rlimits, AppArmor, capabilities and user, no_new_privs, seccomp. */
	if (lockdown_apply(&rc->ld, 0) != 0) {
		alive_fail();
		_exit(EXIT_SETUP);
	}
	if (!seccomp_installed())
		step_fail("the seccomp filter is not installed in PID 1; refusing to run the workload");
	/* 33: nothing but the three sanctioned pipes survives, all close-on-exec. */
	close_fds_except(keep, 3);
	for (int i = 0; i < 3; i++)
		if (keep[i] >= 0)
			set_cloexec(keep[i], 1);
	/* Block before forking so no signal meant for the workload is lost. */
	init_signal_set(&block);
	sigprocmask(SIG_BLOCK, &block, &orig);
	/* 34 */
	status_forked();
	pid_t child = spawn_workload(rc, &orig);
	if (alive_fd >= 0)
		close(alive_fd);
	if (diag_status_fd >= 0) {
		close(diag_status_fd);
		diag_status_fd = -1;
	}
	reap_until(child, report_fd);
}
