#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/proctitle.h"
#include "base/testhook.h"
#include "box/boxns.h"
#include "box/execpath.h"
#include "box/init.h"
#include "box/pty.h"
#include "box/report.h"
#include "lockdown/lockdown.h"

const int init_forwarded[6] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static sigset_t caller_mask;
static int caller_mask_set;

void init_caller_mask(const sigset_t *mask)
{
	caller_mask = *mask;
	caller_mask_set = 1;
}

int init_caller_mask_get(sigset_t *mask)
{
	if (caller_mask_set)
		*mask = caller_mask;
	return caller_mask_set;
}

/* What the workload's process does between its clone and its exec. It
 * runs in init's memory (below), so it writes nothing of init's but err
 * and step, and no handler of init's can run in it: init installs none
 * outside kern-oci's gate, which restores the defaults before this. */
struct spawn_child {
	char **argv;
	const sigset_t *mask;
	int tty;
	int err;
	const char *step;
	char path[PATH_MAX];
};

static int spawned_child(void *arg)
{
	struct spawn_child *c = arg;
	/* -t: the session's controlling terminal is the box's pty, on 0-2. */
	if (c->tty >= 0 ? pty_take(c->tty) < 0 : setsid() < 0) {
		c->err = errno;
		c->step = c->tty >= 0 ? "make the box's pty the workload's terminal" : "setsid";
		_exit(EXIT_SETUP);
	}
	init_signals_default();
	sigprocmask(SIG_SETMASK, c->mask, NULL);
	c->err = exec_box_path(c->argv, c->path);
	_exit(EXIT_NOTFOUND);
}

/* The workload is spawned, not forked: its process shares init's memory
 * until the exec (CLONE_VM|CLONE_VFORK, init waits meanwhile), so no page
 * tables are copied, which is most of what a fork costs, and its stack is
 * a buffer of this frame, whose pages init has long touched. It starts in
 * a session of its own (so no kill(0, ...) of it reaches init, and none of
 * init's reaches the caller), with default dispositions for the signals
 * init handles and with the mask kern found; the three sanctioned pipes
 * are close-on-exec. Not posix_spawnp: glibc's resets every one of the 64
 * signals in the child (115 system calls, 0.2 ms a box here) on a stack
 * it maps fresh, where init knows the handful it has; and -t's terminal
 * takes an ioctl before the exec, which posix_spawn cannot make. */
static pid_t spawn_workload(char **argv, char **env, const sigset_t *orig, int tty)
{
	extern char **environ;
	struct spawn_child c = {.argv = argv, .mask = orig, .tty = tty};
	char stack[8192] __attribute__((aligned(16)));
	/* The search reads the PATH of environ: the box's, never the host's.
	 * init needs the host environment no more. */
	environ = env;
	pid_t child = clone(spawned_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	/* EAGAIN is the clone failing (no task left), not the command. */
	if (child < 0)
		die_setup_errno("spawn the workload: clone");
	if (c.err) {
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
		errno = c.err;
		if (c.step)
			die_setup_errno("%s", c.step);
		exec_fail(argv[0], c.err);
	}
	return child;
}

/* -t, before the lockdown (the pty goes to a --user, which takes
 * CAP_CHOWN): a pty of the box's devpts, with the caller's terminal modes
 * and size (fd 0 is still the caller's terminal); the master goes to the
 * supervisor, which relays it. Returns the slave. */
static int open_tty(const struct run_config *rc, int report_fd)
{
	char why[512];
	int master, slave;
	if (report_fd < 0)
		die_setup("-t needs a supervisor to relay the terminal (run under kern-wait --tty)");
	int dir = pty_devpts_dir();
	if (dir < 0)
		die_setup_errno("-t: /dev/pts in the box is not a devpts of its own (run under kern-fs --tty)");
	long uid = rc->ld.user_set ? (long)rc->ld.uid : -1;
	if (pty_open(dir, 0, uid, &master, &slave, why, sizeof why) < 0)
		die_setup("-t: %s", why);
	close(dir);
	char tag = PTY_TAG;
	if (send_fds(report_fd, &tag, 1, &master, 1) < 0)
		die_setup("-t: cannot hand the pty to the supervisor: %s", send_fds_error(errno));
	close(master);
	return slave;
}

void init_signals_default(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (size_t i = 0; i < sizeof init_forwarded / sizeof init_forwarded[0]; i++)
		sigaction(init_forwarded[i], &dfl, NULL);
	sigaction(SIGCHLD, &dfl, NULL);
}

void init_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (size_t i = 0; i < sizeof init_forwarded / sizeof init_forwarded[0]; i++)
		sigaddset(set, init_forwarded[i]);
}

void forward_until_sigchld(pid_t child, const sigset_t *set, int outside_only)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);
		if (sig == SIGCHLD)
			return;
		/* A sender outside the box's pid namespace shows as pid 0:
		 * the supervisor, kern stop. What the box sends init itself is
		 * not turned back on the workload. */
		if (sig > 0 && (!outside_only || si.si_pid == 0))
			kill(child, sig);
	}
}

/* What init waits for: SIGCHLD, the forwarded signals and SIGCONT, which
 * the supervisor sends after its deadline's SIGTERM: a stopped workload
 * (kill(0, SIGSTOP) from inside) must wake up to act on it. */
static void init_wait_set(sigset_t *set)
{
	init_signal_set(set);
	sigaddset(set, SIGCONT);
}

static void __attribute__((noreturn)) reap_until(pid_t child, int report_fd)
{
	sigset_t set;
	init_wait_set(&set);
	for (;;) {
		forward_until_sigchld(child, &set, 1);
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

static void gate_signal(int sig)
{
	_exit(128 + sig);
}

/* kern-oci create: everything but the workload is done, and the
 * launcher hears so now (the status pipe ends here, as it would at the
 * workload's exec). Then the wait for kern-oci start's byte; a stop
 * signal meanwhile (kern-oci kill, passed on by the supervisor) ends init
 * and the box with 128+N, which init, as PID 1 of its pid namespace, only
 * gets with a handler. */
static void wait_at_gate(int fd)
{
	struct sigaction sa = {.sa_handler = gate_signal};
	sigset_t forwarded;
	char byte;
	ssize_t n;
	/* The handlers first: the supervisor passes on a stop signal only
	 * once it has read the 'F' (supervise.c). Then the signals, held
	 * since PID 1 began, reach them: one already pending ends the box
	 * now, after the 'F', as one sent at the gate would. */
	sigemptyset(&forwarded);
	for (size_t i = 0; i < sizeof init_forwarded / sizeof init_forwarded[0]; i++) {
		sigaction(init_forwarded[i], &sa, NULL);
		sigaddset(&forwarded, init_forwarded[i]);
	}
	status_forked();
	close(diag_status_fd);
	diag_status_fd = -1;
	sigprocmask(SIG_UNBLOCK, &forwarded, NULL);
	while ((n = read(fd, &byte, 1)) < 0 && errno == EINTR)
		;
	close(fd);
	sa.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof init_forwarded / sizeof init_forwarded[0]; i++)
		sigaction(init_forwarded[i], &sa, NULL);
	if (n != 1)
		_exit(EXIT_SETUP);
}

void init_run(const struct run_config *rc, int report_fd, int alive_fd)
{
	sigset_t block, orig;
	int keep[5] = {alive_fd, diag_status_fd, report_fd, -1, rc->gated ? rc->gate_fd : -1};

	alive_remember(alive_fd);
	/* Before the workload exists: nothing in the box may open init's
	 * memory or descriptors (/proc/1/mem, /proc/1/fd, pidfd_getfd), or
	 * it could clear init's parent-death signal and outlive a killed
	 * supervisor. Then init's namespaces go to the supervisor, for kern
	 * exec (boxns.h). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		die_setup_errno("prctl(PR_SET_DUMPABLE, 0)");
	const char *opening;
	if (report_fd >= 0 && box_ns_send(report_fd, &opening) < 0) {
		if (opening)
			die_setup_errno("cannot hand the box's namespaces to the supervisor: open /proc/self/ns/%s",
					opening);
		die_setup("cannot hand the box's namespaces to the supervisor: %s", send_fds_error(errno));
	}
	/* The record has PID 1 now: `kern stop` reaches it from here on. */
	test_phase("pid1-recorded");
	if (rc->tty)
		keep[3] = open_tty(rc, report_fd);
	/* 29-32: rlimits, AppArmor, capabilities and user, no_new_privs, seccomp. */
	if (lockdown_apply(&rc->ld, 0) != 0) {
		alive_fail();
		_exit(EXIT_SETUP);
	}
	/* A uid change (--user; every box without a user namespace) cleared
	 * the parent-death signal and reset dumpable to fs.suid_dumpable: set
	 * both again, then make sure the supervisor did not die in between. */
	if (rc->ld.user_set) {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (report_fd >= 0 && peer_closed(report_fd))
			_exit(EXIT_SETUP);
	}
	if (!seccomp_installed())
		die_setup("the seccomp filter is not installed in PID 1; refusing to run the workload");
	/* /proc/1/cmdline is readable by everything in the box: kern's argv
	 * (host paths of binds, the applet chain) goes. */
	proctitle_set("kern-init");
	/* 33: nothing but the three sanctioned pipes (and -t's pty, kern-oci's
	 * gate) survives,
	 * all close-on-exec. */
	close_fds_except(keep, 5);
	for (int i = 0; i < 3; i++)
		if (keep[i] >= 0)
			set_cloexec(keep[i], 1);
	if (rc->gated)
		wait_at_gate(rc->gate_fd);
	/* Block before forking so no signal meant for the workload is lost
	 * (kern box's PID 1 has held them since its start: one sent during
	 * setup is pending and is passed on once the workload exists). */
	init_wait_set(&block);
	sigprocmask(SIG_BLOCK, &block, &orig);
	if (caller_mask_set)
		orig = caller_mask;
	/* 34 */
	status_forked();
	pid_t child = spawn_workload(rc->argv, rc->env, &orig, keep[3]);
	if (keep[3] >= 0)
		close(keep[3]);
	if (alive_fd >= 0)
		close(alive_fd);
	if (diag_status_fd >= 0) {
		close(diag_status_fd);
		diag_status_fd = -1;
	}
	reap_until(child, report_fd);
}
