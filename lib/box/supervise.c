#include <errno.h>
#include <linux/sched.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/premap.h"
#include "base/testhook.h"
#include "box/boxns.h"
#include "box/init.h"
#include "box/nouserns.h"
#include "box/pty.h"
#include "box/report.h"
#include "box/supervise.h"
#include "box/ttyrelay.h"
#include "box/userns_why.h"
#include "egress/egress.h"
#include "state/boxproc.h"

const char oom_sentence[] =
	"kern: the workload was killed by the kernel's OOM killer against this box's own memory "
	"cap. Raise it with `--memory <size>` (or `memory = \"<size>\"` in a vcpu: profile) if the "
	"workload needs more.";

static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

/* PID 1's own stack, and how much of its top is mapped as it starts. */
#define PID1_STACK (1 << 20)
#define PID1_STACK_MAPPED (32 << 10)

/* The workload is init's only child: its host pid, for SigCgt. */
static pid_t workload_pid(pid_t pid1)
{
	char path[64], buf[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid1, (int)pid1);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	return (pid_t)strtol(buf, NULL, 10);
}

static void arm(int tfd, long long ms)
{
	struct itimerspec it = {.it_value = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000}};
	timerfd_settime(tfd, 0, &it, NULL);
}

static void kill_box(struct supervisor *s, pid_t pid1)
{
	kill(pid1, SIGKILL);
	cg_kill_all(s->cg);
}

/* Print the lines PID 1 sent, one write each. */
static void print_lines(int fd, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *e = strchrnul(p, '\n');
		char line[3200];
		int n = snprintf(line, sizeof line, "%.*s\n", (int)(e - p), p);
		(void)write_all(fd, line, strlen(line));
		/* PID 1's setup failure, relayed here, is the line kern-oci's
		 * --log must end with (diag.h diag_tee). */
		if (fd == 2 && diag_tee && n > 0 && (size_t)n < sizeof line) {
			line[n - 1] = 0;
			diag_tee(line);
		}
		p = *e ? e + 1 : e;
	}
}

struct run_state {
	char status[4096];
	size_t status_len;
	int status_open;
	int status_code;	/* -2 unknown, -1 died in setup, 0 started, >0 failure */
	char text[4096];
	struct init_report report;
	int have_report;
	int deadline_stage;
	int signals;
	int held_signal;	/* for the workload, come before PID 1 could take it */
	int forced_code;
	int oom;
	int pty_master;		/* -t: the box's pty, from PID 1; -1 until then */
};

/* One message on the report socket: init's namespaces (boxns.h), kept
 * and recorded for kern exec, or its final report. Returns -1 at end of
 * file. */
static int read_report(int fd, struct supervisor *s, struct run_state *r)
{
	union {
		struct init_report report;
		char tag;
	} m;
	int fds[BOX_NS_COUNT], nfds;
	long n = recv_fds(fd, &m, sizeof m, fds, BOX_NS_COUNT, &nfds);
	if (n == (long)sizeof m.report && nfds == 0) {
		r->report = m.report;
		r->have_report = 1;
		return 0;
	}
	if (n == 1 && m.tag == BOX_NS_TAG && nfds == BOX_NS_COUNT && s->rec && !record_has_ns(s->rec)) {
		memcpy(s->rec->nsfd, fds, sizeof fds);
		records_update(s->runtime, s->rec);
		return 0;
	}
	if (n == 1 && m.tag == PTY_TAG && nfds == 1 && s->tty && s->to_console) {
		/* The payload is the engine's to read as a name; the fd is what counts. */
		if (send_fds(s->console_fd, "kern-pty", 8, fds, 1) < 0)
			warning("--console-socket: %s", send_fds_error(errno));
		close(fds[0]);
		close(s->console_fd);
		s->to_console = 0;
		return 0;
	}
	if (n == 1 && m.tag == PTY_TAG && nfds == 1 && s->tty && r->pty_master < 0) {
		r->pty_master = fds[0];
		return 0;
	}
	while (nfds > 0)
		close(fds[--nfds]);
	if (n < 0 && errno == EINTR)
		return 0;
	return n > 0 ? 0 : -1;
}

static void read_status(int *fd, struct run_state *r)
{
	ssize_t n = read(*fd, r->status + r->status_len, sizeof r->status - 1 - r->status_len);
	if (n > 0) {
		r->status_len += (size_t)n;
		if (r->status_len < sizeof r->status - 1)
			return;
	} else if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
		return;
	}
	close(*fd);
	*fd = -1;
	r->status_code = status_parse(r->status, r->status_len, r->text, sizeof r->text);
}

/* PID 1 of a pid namespace never hears a signal it has no handler for:
 * the kernel drops it. init blocks the signals it forwards just before it
 * writes 'F' (init.c); one meant for the workload that comes earlier (a
 * caller's SIGTERM, the deadline's) waits here until then, or the caller
 * would wait for a box that never heard it. */
static int pid1_takes_signals(const struct run_state *r)
{
	return r->status_len > 0 && r->status[0] == 'F';
}

static void signal_workload(pid_t pid1, struct run_state *r, int sig)
{
	if (pid1_takes_signals(r))
		kill(pid1, sig);
	else if (!r->held_signal)
		r->held_signal = sig;
}

static void tell_launcher(struct supervisor *s, struct run_state *r)
{
	if (s->detach_fd < 0)
		return;
	char msg[4200];
	int n = snprintf(msg, sizeof msg, "%d %s", r->status_code, r->text);
	(void)write_all(s->detach_fd, msg, (size_t)n);
	close(s->detach_fd);
	s->detach_fd = -1;
}

/* What PID 1 starts from: the supervisor's ends of the pipes and what it
 * was given, read from PID 1's copy of the supervisor's memory. */
struct pid1_start {
	struct supervisor *s;
	int status_r, status_w, report_r, report_w;
	int placed;		/* already in the box cgroup (clone3) */
	int join;		/* cg_join() s->cg: it is made (not cg_pending(); unmapped here) */
	char *stack;		/* its own stack, NULL on the supervisor's */
	sigset_t orig;
};

/* PID 1 from its first instruction, on a stack of its own: the
 * supervisor's stack pages are all shared with it after the clone, and
 * each it writes is a copy-on-write fault (50-80 µs on a VM), where a
 * fresh page costs a fraction of that and the pages it starts with are
 * mapped in one call. */
static int pid1_start(void *arg)
{
	struct pid1_start *p = arg;
	struct supervisor *s = p->s;
	if (p->stack)
		premap(p->stack + PID1_STACK - PID1_STACK_MAPPED, PID1_STACK_MAPPED);
	close(p->status_r);
	close(p->report_r);
	diag_status_fd = p->status_w;
	if (!p->placed && p->join && cg_join(s->cg) < 0)
		die_setup_errno("cannot join the box cgroup");
	/* 16: die with the supervisor; if it is already gone, stop here. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd pp = {.fd = p->report_w, .events = POLLIN};
	if (poll(&pp, 1, 0) == 1 && (pp.revents & (POLLHUP | POLLERR)))
		_exit(EXIT_SETUP);
	/* Out of the caller's session and process group before anything
	 * of the box runs: the caller's terminal, its signals and a
	 * kill(0, ...) from the box never meet (box-cli.md §2). The
	 * supervisor stays where the caller put it. */
	if (setsid() < 0)
		die_setup_errno("setsid");
	/* PID 1 keeps the forwarded signals blocked until init runs the
	 * workload with the caller's mask (init.h); the applet chain's holds
	 * them through its execs and passes the caller's mask on in
	 * KERN_PID1 (chain.h). */
	init_caller_mask(&p->orig);
	if (s->started_fd >= 0)
		close(s->started_fd);
	if (s->chain) {
		set_cloexec(p->status_w, 0);
		set_cloexec(p->report_w, 0);
	}
	s->pid1(s->ctx, p->report_w);
	_exit(EXIT_SETUP);
}

/* PID 1 into the namespaces of flags, running pid1_start(). When
 * cgroup_fd >= 0 (v2), straight into that cgroup (clone3
 * CLONE_INTO_CGROUP, with fork semantics: it takes no function to start
 * on another stack), and without namespaces (the applet chain's
 * kern-wait) by fork(); otherwise on a stack of its own, mapped here and
 * never touched by the supervisor. When clone3 fails, for
 * whatever reason, the plain clone's error or PID 1's own cg_join() says
 * precisely what is wrong. The C library's record of the thread id is the
 * supervisor's in the child: PID 1 never uses it (no raise, abort or
 * pthread calls). */
static pid_t clone_pid1(int flags, int cgroup_fd, struct pid1_start *p)
{
	p->placed = 0;
	p->stack = NULL;
	if (cgroup_fd >= 0) {
		struct clone_args ca = {.flags = (uint64_t)(unsigned)flags | CLONE_INTO_CGROUP,
					.exit_signal = SIGCHLD,
					.cgroup = (uint64_t)cgroup_fd};
		long pid = syscall(SYS_clone3, &ca, sizeof ca);
		if (pid == 0) {
			p->placed = 1;
			_exit(pid1_start(p));
		}
		if (pid > 0)
			return (pid_t)pid;
	}
	if (flags == 0) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(pid1_start(p));
		return pid;
	}
	/* A guard page below it: an overflow faults instead of writing over
	 * whatever lies beneath. */
	char *base = mmap(NULL, PID1_STACK + 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (base == MAP_FAILED || mprotect(base, 4096, PROT_NONE) < 0) {
		int e = errno;
		if (base != MAP_FAILED)
			munmap(base, PID1_STACK + 4096);
		errno = e;
		return -1;
	}
	p->stack = base + 4096;
	/* PID 1 never enters the frames below this one (premap.h). */
	premap_stack_unshare();
	pid_t pid = clone(pid1_start, p->stack + PID1_STACK, flags | SIGCHLD, p);
	int e = errno;
	premap_stack_share();
	munmap(base, PID1_STACK + 4096);
	errno = e;
	return pid;
}

/* The end of teardown step 1: the box's namespaces die with PID 1, not
 * with us (a kept mount namespace would still pin the overlay over the
 * scratch). */
static void drop_namespaces(struct supervisor *s)
{
	if (!s->rec || !record_has_ns(s->rec))
		return;
	for (int i = 0; i < BOX_NS_COUNT; i++) {
		close(s->rec->nsfd[i]);
		s->rec->nsfd[i] = -1;
	}
}

/* Teardown steps 2-5 (isolation.md §8.4), once PID 1 is reaped: the proxy, the box
 * cgroup, scratch, the record. */
static void release(struct supervisor *s)
{
	drop_namespaces(s);
	egress_stop();
	cg_teardown(s->cg);
	s->cg = NULL;
	if (s->scratch)
		scratch_remove(s->scratch);
	if (s->rec)
		records_remove(s->runtime, s->rec);
}

int supervise_wait(struct supervisor *s, int fd)
{
	while (s) {
		struct pollfd p[3] = {{.fd = fd, .events = POLLIN},
				      {.fd = s->sigfd, .events = POLLIN},
				      {.fd = s->tfd, .events = POLLIN}};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		/* PID 1's progress first: when its message (or its end) is
		 * there, a signal or deadline that came with it stays in its
		 * descriptor for the next wait, or for the main loop, which
		 * passes it on. Read first, it ended starts that were done: the
		 * supervisor, slow to run on a busy host, found PID 1's end of
		 * the idmapped-mount service and a SIGQUIT sent after the
		 * workload had begun ("stopped by SIGQUIT before the box
		 * started", 131). */
		if (p[0].revents)
			return 0;
		if (p[1].revents & POLLIN) {
			/* A window size change means nothing yet: PID 1 has no pty. */
			struct signalfd_siginfo si;
			while (read(s->sigfd, &si, sizeof si) == (ssize_t)sizeof si)
				if (si.ssi_signo != SIGWINCH && !s->stopped)
					s->stopped = (int)si.ssi_signo;
		}
		if (p[2].revents & POLLIN && !s->stopped)
			s->stopped = -1;
		if (s->stopped) {
			errno = ECANCELED;
			return -1;
		}
	}
	return 0;
}

int supervise_idle(struct supervisor *s)
{
	int (*idle)(struct supervisor *) = s ? s->idle : NULL;
	if (!idle)
		return 0;
	s->idle = NULL;
	return idle(s);
}

/* The box cannot start (why is printed): kill PID 1 if there is one (-1
 * when it could not be made) and undo what was made. */
static int abort_start(struct supervisor *s, pid_t pid1, int code)
{
	if (pid1 > 0) {
		kill(pid1, SIGKILL);
		while (waitpid(pid1, NULL, 0) < 0 && errno == EINTR)
			;
	}
	alive_fail();
	release(s);
	if (s->detach_fd >= 0) {
		status_send(s->detach_fd, code, "");
		close(s->detach_fd);
		s->detach_fd = -1;
	}
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->tfd >= 0)
		close(s->tfd);
	return code;
}

static void say_stopped_before_start(int sig)
{
	setup_failed("stopped by SIG%s before the box started", sigabbrev_np(sig));
}

/* prepare gave up (SUPERVISE_STOPPED): a stop signal ends the start as a
 * second one ends a running box (128 + its number), the deadline as a
 * PID 1 killed in setup (125); either is said, the box never ran. */
static int stopped_code(const struct supervisor *s)
{
	if (s->stopped > 0) {
		say_stopped_before_start(s->stopped);
		return 128 + s->stopped;
	}
	setup_failed("the --timeout deadline (%llu s) passed before the box started", s->timeout);
	return EXIT_SETUP;
}

int supervise(struct supervisor *s)
{
	int status_p[2], report_p[2];
	sigset_t block, orig;
	struct run_state r = {.status_code = -2, .status_open = 1, .pty_master = -1};
	struct tty_relay tr;
	pid_t pid1;
	int pidfd, sigfd, tfd, oomfd, st = 0, rc;

	if (pipe2(status_p, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report_p) < 0) {
		setup_failed_errno("pipe");
		alive_fail();
		return EXIT_SETUP;
	}
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
		sigaddset(&block, stop_signals[i]);
	if (s->tty)
		sigaddset(&block, SIGWINCH);
	/* PID 1 starts with the signals init forwards blocked too (its copy
	 * of this mask): sent while it builds the root, one waits there for
	 * init instead of being dropped (init.h). The supervisor itself keeps
	 * only its own stop signals blocked, after the clone. */
	sigset_t forwarded, pid1_block, sup_mask;
	init_signal_set(&forwarded);
	sigorset(&pid1_block, &block, &forwarded);
	sigprocmask(SIG_BLOCK, &pid1_block, &orig);
	sigorset(&sup_mask, &orig, &block);
	tty_relay_init(&tr);

	/* 12: PID 1 in the box cgroup before anything of the box runs, the
	 * supervisor never in it, so an OOM group kill can never take the
	 * supervisor: on v2 PID 1 is cloned into it, on v1 it moves itself
	 * there first thing (cg_join), or, when prepare makes the cgroup
	 * (s->idle), once its root is built. With s->prepare it is cloned into
	 * its namespaces too. */
	struct pid1_start ps = {.s = s, .status_r = status_p[0], .status_w = status_p[1],
				.report_r = report_p[0], .report_w = report_p[1], .orig = orig,
				.join = !cg_pending(s->cg)};
	pid1 = clone_pid1(s->prepare ? s->clone_flags : 0, cg_clone_fd(s->cg), &ps);
	int fork_errno = errno;
	sigprocmask(SIG_SETMASK, &sup_mask, NULL);
	if (!s->prepare) {
		/* PID 1's setup is the critical path; the bookkeeping below is
		 * not. A new child often lands on this CPU and would wait until
		 * the supervisor next sleeps: let it run first (the scheduler
		 * moves the supervisor to an idle CPU if there is one). */
		sched_yield();
	}
	close(status_p[1]);
	close(report_p[1]);
	if (pid1 < 0 && s->userns_unprobed && (s->clone_flags & CLONE_NEWUSER) && userns_refusal(fork_errno)) {
		s->userns_unprobed = fork_errno;
		s->sigfd = s->tfd = -1;
		release(s);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		close(status_p[0]);
		close(report_p[0]);
		return SUPERVISE_RETRY;
	}
	s->userns_unprobed = 0;
	if (pid1 < 0) {
		/* A detached box's launcher prints the lines the log gets. */
		if (s->clone_flags & CLONE_NEWUSER) {
			userns_report("clone", fork_errno, s->detach_fd);
		} else {
			setup_failed("fork PID 1: %s", strerror(fork_errno));
			status_setup_failed(s->detach_fd, NULL, "fork PID 1: %s", strerror(fork_errno));
		}
		if (s->detach_fd >= 0) {
			close(s->detach_fd);
			s->detach_fd = -1;
		}
		/* The record, scratch and box cgroup exist already; the signal
		 * and timer descriptors do not yet. */
		s->sigfd = s->tfd = -1;
		return abort_start(s, -1, EXIT_SETUP);
	}
	/* 14, early: prepare waits on PID 1 (a shifted box's whole root is
	 * built meanwhile, idmount.h) and must hear stop signals and the
	 * deadline, which counts from here as for any box. */
	sigfd = s->sigfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	tfd = s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->stopped = 0;
	if (s->timeout && tfd >= 0)
		arm(tfd, (long long)s->timeout * 1000);
	/* PID 1 waits for its id maps and its cgroup. */
	s->report = report_p[0];
	if (s->prepare && (rc = s->prepare(s, pid1)) != 0)
		return abort_start(s, pid1, rc == SUPERVISE_STOPPED ? stopped_code(s) : EXIT_SETUP);
	/* PID 1 has its id maps and runs on: the supervisor's own stack now,
	 * off its critical path (before the maps it delayed PID 1). */
	premap_stack();
	/* The alive pipe now lives only in PID 1 and the workload. */
	if (s->alive_fd >= 0) {
		close(s->alive_fd);
		s->alive_fd = -1;
	}
	/* 13. PID 1's pid goes into the record with its namespaces, in one
	 * write (read_report): PID 1 sends them right after the root is built,
	 * which prepare has waited for, and before anything of the workload
	 * runs. Should they not come, the record gets the pid alone before the
	 * launcher hears of the start (below). */
	pidfd = (int)syscall(SYS_pidfd_open, pid1, 0);
	int pid1_unrecorded = 0;
	if (s->rec) {
		s->rec->pid1 = pid1;
		pid1_unrecorded = !record_has_ns(s->rec);
	}
	oomfd = cg_oom_fd(s->cg);
	fcntl(status_p[0], F_SETFL, O_NONBLOCK);

	test_phase("supervise");
	/* 15 */
	int status_fd = status_p[0], report_open = 1;
	for (;;) {
		struct pollfd p[8] = {
			{.fd = pidfd, .events = POLLIN},   {.fd = status_fd, .events = POLLIN},
			{.fd = report_open && !r.have_report ? report_p[0] : -1, .events = POLLIN},
			{.fd = sigfd, .events = POLLIN},
			{.fd = tfd, .events = POLLIN},     {.fd = oomfd, .events = POLLIN},
		};
		tty_relay_fds(&tr, p + 6);
		if (pidfd < 0) {
			/* No pidfd (old kernel): fall back to a blocking wait. */
			if (waitpid(pid1, &st, 0) == pid1)
				break;
			continue;
		}
		if (poll(p, 8, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* The report socket first: the namespaces PID 1 sent before its
		 * status are in the record before the launcher is told. */
		if (p[2].revents) {
			/* After the report (or at PID 1's death) the socket stays at EOF:
			 * stop polling it rather than spin until the pidfd fires. */
			if (read_report(report_p[0], s, &r) < 0)
				report_open = 0;
			if (r.pty_master >= 0 && tr.master < 0 && !tr.raw) {
				tty_relay_begin(&tr, r.pty_master);
				r.pty_master = -1;
			}
		}
		if (pid1_unrecorded && record_has_ns(s->rec))
			pid1_unrecorded = 0;
		if (p[1].revents) {
			read_status(&status_fd, &r);
			if (status_fd < 0 && pid1_unrecorded) {
				records_update(s->runtime, s->rec);
				pid1_unrecorded = 0;
			}
			if (status_fd < 0)
				tell_launcher(s, &r);
			if (r.held_signal && pid1_takes_signals(&r)) {
				kill(pid1, r.held_signal);
				r.held_signal = 0;
			}
		}
		tty_relay_pump(&tr, p + 6);
		if (p[3].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
				if (si.ssi_signo == SIGWINCH) {
					tty_relay_resize(&tr);
					continue;
				}
				/* The box is a session of its own: a terminal's signal
				 * (SI_KERNEL) reached only kern, and is passed on like
				 * any other, once. */
				if (++r.signals == 1) {
					signal_workload(pid1, &r, (int)si.ssi_signo);
				} else {
					r.forced_code = 128 + (int)si.ssi_signo;
					kill_box(s, pid1);
				}
			}
		}
		if (p[4].revents & POLLIN) {
			unsigned long long ticks;
			if (read(tfd, &ticks, sizeof ticks) < 0)
				ticks = 0;
			if (r.deadline_stage == 0) {
				r.deadline_stage = 1;
				/* init passes both on, SIGTERM first (the lower
				 * number): a workload stopped from inside the box
				 * wakes to the SIGTERM instead of waiting for the
				 * SIGKILL. */
				signal_workload(pid1, &r, SIGTERM);
				kill(pid1, SIGCONT);
				pid_t w = workload_pid(pid1);
				arm(tfd, w > 0 && proc_catches(w, SIGTERM) ? 2000 : 200);
			} else {
				kill_box(s, pid1);
			}
		}
		if (p[5].revents & POLLIN && cg_oom_fired(s->cg)) {
			/* v1 has no group kill: the first OOM kill ends the whole box. */
			r.oom = 1;
			kill_box(s, pid1);
		}
		if (p[0].revents & POLLIN) {
			if (waitpid(pid1, &st, 0) == pid1)
				break;
		}
	}
	/* Teardown (isolation.md §8.4). 1: PID 1 is reaped; collect what it said. */
	while (report_open && !r.have_report)
		if (read_report(report_p[0], s, &r) < 0)
			report_open = 0;
	if (status_fd >= 0) {
		fcntl(status_fd, F_SETFL, 0);
		while (status_fd >= 0)
			read_status(&status_fd, &r);
	}
	close(report_p[0]);
	/* The box's last output, then the caller's terminal as it was, before
	 * kern says anything more on it. A pty that came only with PID 1's
	 * last messages (the loop reads one a turn and ends at PID 1's exit)
	 * still holds all the box wrote. */
	tty_relay_end(&tr);
	if (r.pty_master >= 0)
		tty_relay_drain(&tr, r.pty_master);
	if (pidfd >= 0)
		close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	if (tfd >= 0)
		close(tfd);
	test_phase("teardown");
	/* What the cgroup says, read before it goes. */
	int oom = r.oom || cg_oom_evidence(s->cg);
	int byte1 = cg_byte1(s->cg);
	/* 2-5 */
	release(s);

	int started, code, sig = 0;
	if (r.status_code > 0) {
		print_lines(2, r.text);
		started = r.status_code == EXIT_NOEXEC || r.status_code == EXIT_NOTFOUND;
		code = r.status_code;
	} else if (r.status_code == 0 || r.have_report) {
		started = 1;
		int ws = r.have_report ? r.report.status : st;
		if (WIFSIGNALED(ws)) {
			sig = WTERMSIG(ws);
			code = 128 + sig;
		} else {
			code = WEXITSTATUS(ws);
		}
	} else {
		started = 0;
		if (r.forced_code)
			say_stopped_before_start(r.forced_code - 128);
		else if (r.deadline_stage)
			setup_failed("the --timeout deadline (%llu s) passed before the box started", s->timeout);
		else if (WIFSIGNALED(st))
			setup_failed("PID 1 was killed by signal %d during setup", WTERMSIG(st));
		else
			setup_failed("PID 1 exited with status %d during setup", WEXITSTATUS(st));
		code = EXIT_SETUP;
	}
	if (r.status_code < -1)
		r.status_code = started ? 0 : -1;
	tell_launcher(s, &r);
	if (started && oom) {
		code = 137;
		sig = SIGKILL;
	}
	if (r.forced_code)
		code = r.forced_code;
	/* 6 */
	if (started && oom)
		diag_line(0, "%s", oom_sentence);
	if (started && s->started_fd >= 0) {
		unsigned char bytes[4] = {1, (unsigned char)byte1, (unsigned char)(oom ? 1 : 0),
					  (unsigned char)sig};
		(void)write_all(s->started_fd, bytes, 4);
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);
	/* 7 */
	return code;
}
