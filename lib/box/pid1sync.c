#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/testhook.h"
#include "box/idmount.h"
#include "box/ns.h"
#include "box/pid1sync.h"
#include "box/supervise.h"
#include "cgroup/cgroup.h"
#include "egress/egress.h"

void pid1sync_wait(int sock, int shifted, int egress)
{
	const char *what;
	char b;
	/* A supervisor that fails or dies kills PID 1; its word says why. */
	if (read(sock, &b, 1) != 1 || (b != 'm' && b != 'a'))
		_exit(EXIT_SETUP);
	test_phase("pid1-mapped");
	/* 'a': the supervisor sleeps until PID 1 runs (pid1sync.h). A send
	 * that fails is a supervisor that is gone, which ends PID 1. */
	if (b == 'a')
		(void)send(sock, "k", 1, MSG_NOSIGNAL);
	if (shifted && ns_become_root(&what) < 0)
		die_setup_errno("%s in the box's user namespace", what);
	/* The uid change cleared the parent-death signal for a moment. */
	if (shifted && peer_closed(sock))
		_exit(EXIT_SETUP);
	if (egress) {
		int stage, fd = egress_listen(&stage), e = errno;
		char msg[2 + sizeof e] = {fd >= 0 ? 'L' : 'E', (char)stage};
		memcpy(msg + 2, &e, sizeof e);
		/* Unsent (this user's descriptors in flight over its limit), the
		 * supervisor would read PID 1's end of setup as its death. */
		int sent = send_fds(sock, msg, sizeof msg, &fd, fd >= 0);
		e = errno;
		if (fd >= 0)
			close(fd);
		if (sent < 0)
			die_setup("cannot hand the egress listener to the supervisor: %s", send_fds_error(e));
	}
}

/* PID 1's 'k': it has run. Until then the supervisor sleeps, so that
 * a PID 1 that the kernel placed on the supervisor's CPU (most clones
 * here) runs at once, and the supervisor, woken by it, goes on with its
 * own work (a v1 box cgroup, the sweep) on the other CPU. -1 when
 * stopped; 0 also when PID 1 ended first (its status says why). */
static int await_start(int sock, struct supervisor *s)
{
	char b;
	if (supervise_wait(s, sock) < 0)
		return -1;
	ssize_t n = read(sock, &b, 1);
	(void)n;
	return 0;
}

/* 8, second half: PID 1's listener to the proxy. -1 when stopped. */
static int hand_egress(int sock, int egress_ctl, struct supervisor *s)
{
	char msg[2 + sizeof(int)];
	int listener = -1, got, err = 0;
	if (supervise_wait(s, sock) < 0)
		return -1;
	long n = recv_fds(sock, msg, sizeof msg, &listener, 1, &got);
	if (n != (long)sizeof msg) {
		/* PID 1 died in setup; its status says why. */
		if (listener >= 0)
			close(listener);
		return 0;
	}
	memcpy(&err, msg + 2, sizeof err);
	(void)egress_hand_over(egress_ctl, msg[0] == 'L' ? listener : -1, msg[1], err);
	return 0;
}

int pid1sync_serve(int sock, pid_t pid1, const struct ns_config *nc, int egress, int egress_ctl,
		   struct supervisor *s)
{
	/* Nothing else of PID 1's comes back before its root is built when
	 * it sends no listener and asks for no idmapped mounts. */
	int shifted = ns_shifted(nc), answer = !shifted && !egress;
	(void)send(sock, answer ? "a" : "m", 1, MSG_NOSIGNAL);
	if (egress && hand_egress(sock, egress_ctl, s) < 0)
		return SUPERVISE_STOPPED;
	if (answer && await_start(sock, s) < 0)
		return SUPERVISE_STOPPED;
	/* A shifted PID 1's host files: idmapped here until it has its root. */
	int r = shifted ? idm_serve(sock, pid1, nc, s) : 0;
	if (r == IDM_IDLE_FAILED)
		return -1;
	if (r < 0) {
		if (errno == ECANCELED && s && s->stopped)
			return SUPERVISE_STOPPED;
		setup_failed_errno("serving PID 1's idmapped mounts");
		return -1;
	}
	return 0;
}

int pid1sync_send_cgroup(int sock, const struct cg_box *cg)
{
	int fds[CG_JOIN_MAX];
	char failed[PATH_MAX + 32];
	int n = cg_join_open(cg, fds, CG_JOIN_MAX, failed, sizeof failed);
	if (n < 0) {
		setup_failed_errno("cgroup: open %s, for PID 1 to join", failed);
		return -1;
	}
	/* A rootless supervisor's descriptors in flight count against its
	 * open-file limit as PID 1's do (send_fds() waits that out a while):
	 * unsent, PID 1 would wait for them for ever. A PID 1 that has ended
	 * meanwhile (a setup failure of its own) says why in its status. */
	int sent = send_fds(sock, "c", 1, fds, n), e = errno;
	while (n > 0)
		close(fds[--n]);
	if (sent < 0 && !peer_closed(sock)) {
		setup_failed("cannot hand the box cgroup to PID 1: %s", send_fds_error(e));
		return -1;
	}
	return 0;
}

void pid1sync_join_cgroup(int sock)
{
	int fds[CG_JOIN_MAX], got = 0;
	char b = 0;
	long n = recv_fds(sock, &b, 1, fds, CG_JOIN_MAX, &got);
	int r = n == 1 && b == 'c' ? cg_join_by(fds, got) : 1, e = errno;
	while (got > 0)
		close(fds[--got]);
	if (r > 0)
		_exit(EXIT_SETUP);
	errno = e;
	if (r < 0)
		die_setup_errno("cannot join the box cgroup");
}
