/* The egress proxy's process: started from the launcher in host
 * namespaces, joined to the box by a listener passed over a socketpair,
 * killed and reaped at teardown. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <malloc.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/env.h"
#include "base/idmap.h"
#include "base/fdutil.h"
#include "base/netlo.h"
#include "base/parse.h"
#include "cgroup/cgroup.h"
#include "egress/egress.h"
#include "egress/proxy.h"
#include "egress/resolve.h"

#define PROXY_UID 65534	/* nobody: the proxy needs no privilege at all */
#define CTL_FD 3
#define REPLY_MS 10000

static int failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failed(const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	warning("egress filter failed to start (%s); the box has NO outbound", why);
	return -1;
}

/* Child side: report why start-up failed, then go. */
static void child_fail(const char *what) __attribute__((noreturn));
static void child_fail(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "E%s: %s", what, strerror(errno));
	(void)send(CTL_FD, msg, n > 0 ? (size_t)n : 1, MSG_NOSIGNAL);
	_exit(1);
}

/* This process's proxy, for egress_stop(): set by egress_start() and
 * egress_attach(); after an exec, KERN_EGRESS_FD and KERN_EGRESS_PID. */
static int held_ctl = -1;
static pid_t held_pid = -1;

/* 1 in the initial user namespace, whose uid map is the identity over
 * all 2^32-1 ids. Unknown counts as initial: the strict case. */
static int initial_userns(void)
{
	struct id_range r[2];
	int n = idmap_read("/proc/self/uid_map", r, 2);
	return n < 0 || idmap_is_initial(r, n);
}

/* The proxy parses what the box sends, so it keeps no privilege: host root
 * becomes uid/gid 65534 (a failure is fatal); root of some other user
 * namespace moves there if it can. Either way no capability survives. */
static void drop_privileges(void)
{
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * the uid change takes away. */
	for (int c = 0; c <= CAP_LAST_CAP; c++)
		(void)prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	if (geteuid() == 0) {
		int must = initial_userns();
		if (setgroups(0, NULL) < 0 && must)
			child_fail("setgroups");
		if (setresgid(PROXY_UID, PROXY_UID, PROXY_UID) < 0) {
			if (must)
				child_fail("setresgid 65534");
		} else if (setresuid(PROXY_UID, PROXY_UID, PROXY_UID) < 0 && must) {
			child_fail("setresuid 65534");
		}
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	cap_t none = cap_init();
	if (!none || cap_set_proc(none) < 0)
		child_fail("clearing capabilities");
	cap_free(none);
}

static void proxy_child(const struct egress_config *cfg, int sock, pid_t parent) __attribute__((noreturn));
static void proxy_child(const struct egress_config *cfg, int sock, pid_t parent)
{
	sigset_t none;
	struct sigaction dfl;
	struct rlimit rl;

	setsid();
	/* Charged to the box before it does anything (isolation.md §9.1), while the box
	 * cgroup's descriptors are still open. */
	int charged = !cfg->cg || cg_join(cfg->cg) == 0, charge_errno = errno;
	/* Keep only the control socket (as fd 3) and /dev/null as stdio: the
	 * caller's pipes, KERN_STARTED_FD and KERN_ALIVE_FD must reach EOF
	 * when the box ends, whatever this process does. */
	if (sock != CTL_FD && dup3(sock, CTL_FD, O_CLOEXEC) < 0)
		_exit(1);
	if (!charged) {
		errno = charge_errno;
		child_fail("cannot charge the proxy to the box cgroup");
	}
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
		child_fail("open /dev/null");
	int keep = CTL_FD;
	close_fds_except(&keep, 1);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		(void)sigaction(s, &dfl, NULL);
	signal(SIGPIPE, SIG_IGN);

	drop_privileges();
	/* After the uid change, which would clear it: die with the supervisor. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail("prctl PR_SET_PDEATHSIG");
	if (getppid() != parent)
		_exit(0);
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)prctl(PR_SET_NAME, "kern-egress", 0, 0, 0);
	/* 128 tunnels use 2 descriptors each, plus lingering refusals. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024 && rl.rlim_max >= 1024) {
		rl.rlim_cur = 1024;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* Resolver threads would each get a malloc arena; one is plenty. */
	mallopt(M_ARENA_MAX, 1);
	egress_resolve_init();
	if (egress_proxy_run(CTL_FD, cfg->allow, cfg->nallow) < 0)
		child_fail("proxy event loop");
	_exit(0);
}

/* Waits for one message on ctl; returns its length, 0 on EOF, -1 on a
 * timeout or error (errno set). */
static ssize_t reply(int ctl, char *buf, size_t len)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	int r;
	while ((r = poll(&p, 1, REPLY_MS)) < 0 && errno == EINTR)
		;
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0)
		return -1;
	ssize_t n;
	while ((n = recv(ctl, buf, len, 0)) < 0 && errno == EINTR)
		;
	return n;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int egress_start(const struct egress_config *cfg, int *ctl)
{
	int sv[2];
	char msg[256];
	*ctl = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return failed("socketpair: %s", strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return failed("fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(sv[0]);
		proxy_child(cfg, sv[1], parent);
	}
	close(sv[1]);
	ssize_t n = reply(sv[0], msg, sizeof msg - 1);
	if (n == 1 && msg[0] == 'R') {
		*ctl = held_ctl = sv[0];
		held_pid = pid;
		return 0;
	}
	int e = errno;
	reap(pid);
	close(sv[0]);
	if (n < 0)
		return failed("waiting for the proxy: %s", strerror(e));
	if (n > 1 && msg[0] == 'E') {
		msg[n] = 0;
		return failed("%s", msg + 1);
	}
	return failed("the proxy exited during start-up");
}

/* Sends one byte, and fd when >= 0. */
static int send_fd(int ctl, char what, int fd)
{
	return send_fds(ctl, &what, 1, &fd, fd >= 0);
}

/* The proxy answers 'A' or 'X' followed by its pid. */
static pid_t answer_pid(int ctl, char want)
{
	char msg[1 + sizeof(pid_t)];
	pid_t pid;
	if (reply(ctl, msg, sizeof msg) != (ssize_t)sizeof msg || msg[0] != want)
		return -1;
	memcpy(&pid, msg + 1, sizeof pid);
	return pid > 0 ? pid : -1;
}

/* Gives up on an attach whose listener could not be made: tells the
 * proxy to quit and reaps it. */
static int abandon(int ctl, const char *what, int err)
{
	if (send_fd(ctl, 'X', -1) == 0) {
		pid_t pid = answer_pid(ctl, 'X');
		if (pid > 0)
			reap(pid);
	}
	close(ctl);
	held_ctl = -1;
	held_pid = -1;
	failed("%s: %s", what, strerror(err));
	return -1;
}

int egress_listen(int *stage)
{
	struct sockaddr_in a;
	int one = 1;
	*stage = EGRESS_LISTEN_SOCKET;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons(3128);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	*stage = EGRESS_LISTEN_BIND;
	int ok = bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 4096) == 0;
	/* PID 1 brings lo up too (isolation.md §2.6 step 27); here it makes
	 * the listener reachable as soon as it exists. A lo that will not come
	 * up fails the proxy closed (no outbound), as PID 1 then fails the box. */
	const char *call;
	if (ok) {
		*stage = EGRESS_LISTEN_LO;
		ok = lo_up(&call) == 0;
	}
	if (!ok) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/* What egress_listen() was doing at stage, for the warning. */
static const char *listen_step(int stage)
{
	switch (stage) {
	case EGRESS_LISTEN_SOCKET:
		return "socket in the box network namespace";
	case EGRESS_LISTEN_BIND:
		return "listen on 127.0.0.1:3128 in the box network namespace";
	default:
		return "bring lo up in the box network namespace";
	}
}

int egress_hand_over(int ctl, int listener, int stage, int err)
{
	if (ctl < 0) {
		if (listener >= 0)
			close(listener);
		return -1;
	}
	if (listener < 0)
		return abandon(ctl, listen_step(stage), err);
	int sent = send_fd(ctl, 'L', listener);
	int e = errno;
	close(listener);
	pid_t pid = sent == 0 ? answer_pid(ctl, 'A') : -1;
	if (pid < 0) {
		if (sent == 0)
			e = errno ? errno : EPROTO;
		close(ctl);
		held_ctl = -1;
		held_pid = -1;
		failed("handing the listener to the proxy: %s", strerror(e));
		return -1;
	}
	char num[24];
	snprintf(num, sizeof num, "%d", (int)pid);
	setenv(EGRESS_PID_ENV, num, 1);
	held_ctl = ctl;
	held_pid = pid;
	return 0;
}

int egress_attach(int ctl)
{
	int stage;
	if (ctl < 0)
		return -1;
	int listener = egress_listen(&stage);
	return egress_hand_over(ctl, listener, stage, errno);
}

/* The lifeline named by KERN_EGRESS_FD, if it is one: a UNIX seqpacket
 * socket. */
static int env_ctl(void)
{
	int fd = env_fd(EGRESS_FD_ENV), type = 0;
	socklen_t len = sizeof type;
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
		return -1;
	return fd;
}

/* The pid named by KERN_EGRESS_PID, if it is our own kern-egress child. */
static pid_t env_pid(void)
{
	const char *v = env_get(EGRESS_PID_ENV);
	unsigned long long n;
	char path[64], stat[256];
	if (!v || parse_u64(v, &n) < 0 || n < 2 || n > 1 << 30)
		return -1;
	snprintf(path, sizeof path, "/proc/%llu/stat", n);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, stat, sizeof stat - 1);
	close(fd);
	if (got <= 0)
		return -1;
	stat[got] = 0;
	/* "pid (comm) state ppid ..."; comm cannot hold ')' here. */
	char *close_paren = strrchr(stat, ')'), *end;
	if (!close_paren || strstr(stat, "(kern-egress)") == NULL || strlen(close_paren) < 5)
		return -1;
	long ppid = strtol(close_paren + 4, &end, 10);
	if (end == close_paren + 4 || *end != ' ' || ppid != (long)getpid())
		return -1;
	return (pid_t)n;
}

void egress_stop(void)
{
	int ctl = held_ctl >= 0 ? held_ctl : env_ctl();
	pid_t pid = held_pid > 0 ? held_pid : env_pid();
	held_ctl = -1;
	held_pid = -1;
	unsetenv(EGRESS_FD_ENV);
	unsetenv(EGRESS_PID_ENV);
	if (ctl >= 0)
		close(ctl);
	if (pid <= 0)
		return;
	/* May fail with EPERM from inside the box's user namespace; the closed
	 * lifeline ends the proxy then. */
	kill(pid, SIGKILL);
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return;
		struct timespec ts = {0, 10L * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}
