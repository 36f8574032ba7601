#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/parse.h"
#include "base/path.h"
#include "base/testhook.h"
#include "box/idmount.h"
#include "box/ns.h"
#include "box/profiles.h"
#include "box/supervise.h"
#include "box/vdisk.h"

/* PID 1 -> supervisor: one host path, or a disk vdisk's size. */
struct idm_req {
	char kind;		/* 'L' overlay lower, 'B' bind, 'D' disk vdisk (path: bytes) */
	char ro;
	char path[PATH_MAX];	/* NUL-terminated; only what is used is sent */
};

/* Supervisor -> PID 1: the tree (SCM_RIGHTS) when err is 0, else the
 * errno and the step that failed. */
struct idm_reply {
	int err;
	char step[160];
};

/* ---- PID 1's side ---- */

/* Requests PID 1 sent ahead (idm_prefetch) and has not taken yet, in the
 * order the supervisor answers them. Without them every tree costs PID 1
 * a round trip to the supervisor and back, one after the other (the host
 * image alone asks for a dozen); sent ahead, the supervisor makes them
 * while PID 1 builds the rest of the root. At most IDM_AHEAD: each waits
 * as a small message in the socket's buffer, which it must not fill. */
#define IDM_AHEAD 32

struct idm_pending {
	char kind, ro;
	char *path;		/* NULL once taken */
	int answered;
	int fd;			/* the tree when answered without an error */
	struct idm_reply rep;
};

static struct idm_pending ahead[IDM_AHEAD];
static int nahead, nanswered;

/* The paths of those requests, one after another: no malloc on PID 1's
 * path, where each first write to a heap page the supervisor shares is a
 * copy-on-write fault. A request that does not fit is asked for when it
 * is needed, as one the socket's buffer had no room for. */
static char ahead_paths[8192];
static size_t ahead_used;

static void request_for(struct idm_req *req, const char *src, int lower, int ro, size_t *len)
{
	size_t n = strlen(src);
	req->kind = lower ? 'L' : 'B';
	req->ro = (char)(ro || lower);
	memcpy(req->path, src, n + 1);
	*len = offsetof(struct idm_req, path) + n + 1;
}

/* One answer from the supervisor into *rep and *fd (-1 unless it carries
 * a tree). 0, or -1 with errno (EPROTO for a malformed answer). */
static int receive(int idm_fd, struct idm_reply *rep, int *fd)
{
	int nfds;
	*fd = -1;
	long got = recv_fds(idm_fd, rep, sizeof *rep, fd, 1, &nfds);
	if (got != (long)sizeof *rep || (rep->err == 0 && nfds != 1)) {
		if (nfds == 1)
			close(*fd);
		*fd = -1;
		errno = got < 0 ? errno : EPROTO;
		return -1;
	}
	if (rep->err && nfds == 1) {
		close(*fd);
		*fd = -1;
	}
	return 0;
}

/* The next answer belongs to the oldest request sent ahead still waiting. */
static int receive_ahead(int idm_fd)
{
	struct idm_pending *p = &ahead[nanswered];
	if (receive(idm_fd, &p->rep, &p->fd) < 0)
		return -1;
	p->answered = 1;
	nanswered++;
	return 0;
}

void idm_prefetch(int idm_fd, const char *src, int lower, int ro)
{
	struct idm_req req;
	size_t len;
	if (idm_fd < 0 || nahead == IDM_AHEAD || strlen(src) >= sizeof req.path)
		return;
	size_t n = strlen(src) + 1;
	if (n > sizeof ahead_paths - ahead_used)
		return;
	request_for(&req, src, lower, ro, &len);
	/* Never blocks: a full buffer only means this one is asked for when
	 * it is needed. */
	if (send(idm_fd, &req, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
		return;
	char *copy = memcpy(ahead_paths + ahead_used, src, n);
	ahead_used += n;
	ahead[nahead++] = (struct idm_pending){.kind = req.kind, .ro = req.ro, .path = copy, .fd = -1};
}

void idm_forget(int idm_fd)
{
	/* Every answer is read before PID 1 closes its end, so that the
	 * supervisor never writes to a closed socket. */
	while (nanswered < nahead && receive_ahead(idm_fd) == 0)
		;
	for (int i = 0; i < nahead; i++)
		if (ahead[i].path && ahead[i].fd >= 0)
			close(ahead[i].fd);
	nahead = nanswered = 0;
	ahead_used = 0;
}

static int pending_index(const struct idm_req *req)
{
	for (int i = 0; i < nahead; i++)
		if (ahead[i].path && ahead[i].kind == req->kind && ahead[i].ro == req->ro &&
		    strcmp(ahead[i].path, req->path) == 0)
			return i;
	return -1;
}

/* A request not sent ahead, and its answer, which comes after those to
 * every request that was. */
static int ask_now(int idm_fd, const struct idm_req *req, size_t len, struct idm_reply *rep, int *fd)
{
	while (nanswered < nahead)
		if (receive_ahead(idm_fd) < 0)
			return -1;
	if (send_fds(idm_fd, req, len, NULL, 0) < 0)
		return -1;
	return receive(idm_fd, rep, fd);
}

/* The tree of an answer, or -1 with the supervisor's errno and step. */
static int answer_tree(const struct idm_reply *rep, int fd, const char **what)
{
	static char step[sizeof ((struct idm_reply *)0)->step];
	if (rep->err) {
		memcpy(step, rep->step, sizeof step);
		step[sizeof step - 1] = 0;
		*what = step;
		errno = rep->err;
		return -1;
	}
	return fd;
}

int idm_source(int idm_fd, const char *src, int lower, const struct bind_opts *o, int *tree,
	       const char **what)
{
	struct idm_req req;
	struct idm_reply rep;
	size_t len;
	int fd = -1, i;

	*tree = 0;
	*what = "open";
	if (idm_fd < 0)
		return open_nofollow_abs(src);
	if (strlen(src) >= sizeof req.path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	request_for(&req, src, lower, o->ro, &len);
	*what = "asking the supervisor for an idmapped mount of";
	if ((i = pending_index(&req)) >= 0) {
		while (!ahead[i].answered)
			if (receive_ahead(idm_fd) < 0)
				return -1;
		ahead[i].path = NULL;
		rep = ahead[i].rep;
		fd = ahead[i].fd;
	} else if (ask_now(idm_fd, &req, len, &rep, &fd) < 0) {
		return -1;
	}
	fd = answer_tree(&rep, fd, what);
	*tree = fd >= 0;
	return fd;
}

int idm_vdisk(int idm_fd, uint64_t size, const char **what)
{
	struct idm_req req = {.kind = 'D'};
	struct idm_reply rep;
	int fd;
	snprintf(req.path, sizeof req.path, "%" PRIu64, size);
	*what = "asking the supervisor for the disk";
	if (ask_now(idm_fd, &req, offsetof(struct idm_req, path) + strlen(req.path) + 1, &rep, &fd) < 0)
		return -1;
	return answer_tree(&rep, fd, what);
}

int idm_attach(int fd, int tree, int dstfd, const char *dstpath, const struct bind_opts *o,
	       const char **what)
{
	return tree ? bind_attach(fd, dstfd, what) : bind_fd(fd, dstfd, dstpath, o, what);
}

/* ---- the supervisor's side ---- */

struct idm_state {
	pid_t pid1;
	const struct ns_config *cfg;
	int own;	/* PID 1's user namespace */
	int helper;	/* `0 BASE 1` + identity, for a range box's binds */
	pid_t helper_pid;
	int vdisks;	/* disk vdisks made */
};

/* The helper child below: it only holds its user namespace until the
 * supervisor has a descriptor of it. It shares the supervisor's memory
 * (CLONE_VM: no page tables to copy on the start path) and touches none of
 * it but its own stack and these two numbers; read() ends at EOF, also
 * when the supervisor dies. */
static int helper_rd = -1, helper_wr = -1;
static char helper_stack[16384] __attribute__((aligned(16)));

static int helper_hold(void *arg)
{
	char b;
	(void)arg;
	close(helper_wr);
	return read(helper_rd, &b, 1) < 0;
}

/* A user namespace that only serves as an idmap: a child is cloned into
 * it, its maps written and the namespace kept by descriptor; the child,
 * let go, is reaped later (*child) off PID 1's path. */
static int helper_userns(const struct ns_ids *r, pid_t *child)
{
	const struct ns_ids ids = *r;
	char umap[128], gmap[128], path[64];
	int p[2], fd = -1, e = 0;

	*child = -1;
	if (ids.ubase == 0 || ids.gbase == 0) {
		errno = EINVAL;	/* ids never read: an identity map would be host root */
		return -1;
	}
	snprintf(umap, sizeof umap, "0 %lu 1\n", ids.ubase);
	if (ids.ucount > 1)
		snprintf(umap + strlen(umap), sizeof umap - strlen(umap), "%lu %lu %lu\n",
			 ids.ubase + 1, ids.ubase + 1, ids.ucount - 1);
	snprintf(gmap, sizeof gmap, "0 %lu 1\n", ids.gbase);
	if (ids.gcount > 1)
		snprintf(gmap + strlen(gmap), sizeof gmap - strlen(gmap), "%lu %lu %lu\n",
			 ids.gbase + 1, ids.gbase + 1, ids.gcount - 1);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	helper_rd = p[0];
	helper_wr = p[1];
	pid_t c = clone(helper_hold, helper_stack + sizeof helper_stack, CLONE_VM | CLONE_NEWUSER | SIGCHLD,
			NULL);
	if (c < 0) {
		e = errno;
	} else {
		char gpath[64];
		snprintf(path, sizeof path, "/proc/%d/uid_map", (int)c);
		snprintf(gpath, sizeof gpath, "/proc/%d/gid_map", (int)c);
		if (write_small_file(path, umap) < 0 || write_small_file(gpath, gmap) < 0)
			e = errno;
		snprintf(path, sizeof path, "/proc/%d/ns/user", (int)c);
		if (!e && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			e = errno;
	}
	close(p[0]);
	close(p[1]);
	*child = c;
	errno = e;
	return fd;
}

static void reap(pid_t child)
{
	if (child > 0)
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
}

static int own_userns(struct idm_state *st)
{
	char path[64];
	if (st->own < 0) {
		snprintf(path, sizeof path, "/proc/%d/ns/user", (int)st->pid1);
		st->own = open(path, O_RDONLY | O_CLOEXEC);
	}
	return st->own;
}

/* The tree of one request, or -1 with errno and *what. */
static int make_tree(struct idm_state *st, const struct idm_req *req, const char **what)
{
	int lower = req->kind == 'L';
	int userns;
	if (lower || !st->cfg->range) {
		*what = "open PID 1's user namespace for";
		userns = own_userns(st);
	} else {
		*what = "make the idmap's user namespace for";
		if (st->helper < 0)
			st->helper = helper_userns(&st->cfg->ids, &st->helper_pid);
		userns = st->helper;
	}
	if (userns < 0)
		return -1;
	*what = "open";
	int sfd = open_nofollow_abs(req->path);
	if (sfd < 0)
		return -1;
	/* Recursive: a bind made in the box's user namespace would take the
	 * submounts (they are locked there), and so does this one. */
	struct bind_opts o = {.ro = req->ro || lower, .idmap = 1, .userns_fd = userns,
			      .recursive = 1};
	int tree = bind_clone(sfd, &o, what);
	if (tree < 0 && errno == EINVAL && !lower) {
		/* A filesystem that cannot be idmapped (NFS, FUSE, overlayfs...):
		 * the bind still works, its files just belong to nobody in the
		 * box, which therefore holds less over them, never more. */
		const char *why = *what;
		o.idmap = 0;
		tree = bind_clone(sfd, &o, what);
		if (tree >= 0)
			note("%s (or a mount below it) cannot be idmapped (%s: %s): in the box its "
			     "files belong to nobody",
			     req->path, why, strerror(EINVAL));
	}
	int e = errno;
	close(sfd);
	if (tree < 0 && e == ENOSYS)
		*what = "idmapped mounts, which root's boxes need (Linux 5.12; --map-host-root does "
			"without), for";
	errno = e;
	return tree;
}

/* A disk vdisk (vdisk.h) of the size PID 1 names, in the box's scratch
 * directory, its root directory box root's; at most as many as a box has
 * vdisks. */
static int make_vdisk(struct idm_state *st, const char *size_text, const struct supervisor *s,
		      const char **what)
{
	unsigned long long size;
	*what = "disk vdisk request";
	if (parse_u64(size_text, &size) < 0 || !s || !s->scratch) {
		errno = EINVAL;
		return -1;
	}
	if (++st->vdisks > PROFILES_MAX_VDISKS) {
		errno = E2BIG;
		return -1;
	}
	return vdisk_make(s->scratch, size, st->cfg->ids.ubase, st->cfg->ids.gbase, what);
}

int idm_serve(int sock, pid_t pid1, const struct ns_config *cfg, struct supervisor *s)
{
	struct idm_state st = {.pid1 = pid1, .cfg = cfg, .own = -1, .helper = -1, .helper_pid = -1};
	struct idm_req req;
	int rc = 0, e = 0, served = 0;
	for (;;) {
		int stray[1], nfds;
		/* The requests PID 1 sent ahead are answered and it builds on:
		 * the supervisor's time is free until the next. */
		struct pollfd next = {.fd = sock, .events = POLLIN};
		if (served && s && s->idle && poll(&next, 1, 0) == 0) {
			if (supervise_idle(s) < 0) {
				rc = IDM_IDLE_FAILED;
				break;
			}
			/* A test holds the supervisor here while PID 1 goes on
			 * alone: PID 1's end and a signal then meet in one poll. */
			test_phase("idle-done");
		}
		if (supervise_wait(s, sock) < 0) {
			rc = -1;
			e = errno;
			break;
		}
		long n = recv_fds(sock, &req, sizeof req, stray, 1, &nfds);
		if (nfds)
			close(stray[0]);
		if (n <= 0) {
			/* End of file: PID 1 has its root (or died, and says why).
			 * A PID 1 that died with answers unread resets the socket
			 * instead: the same end. */
			rc = n < 0 && errno != ECONNRESET ? -1 : 0;
			e = errno;
			break;
		}
		struct idm_reply rep = {0};
		const char *what = "request";
		int tree = -1;
		size_t plen = (size_t)n > offsetof(struct idm_req, path) ?
				      (size_t)n - offsetof(struct idm_req, path) : 0;
		int path_req = req.kind == 'L' || req.kind == 'B';
		if (plen == 0 || req.path[plen - 1] != 0 || (!path_req && req.kind != 'D') ||
		    (path_req && !path_is_clean_abs(req.path)))
			errno = EINVAL;
		else if (req.kind == 'D')
			tree = make_vdisk(&st, req.path, s, &what);
		else
			tree = make_tree(&st, &req, &what);
		if (tree < 0) {
			rep.err = errno ? errno : EIO;
			snprintf(rep.step, sizeof rep.step, "%s", what);
		}
		int sent = send_fds(sock, &rep, sizeof rep, &tree, tree >= 0);
		served++;
		if (tree >= 0)
			close(tree);
		if (sent < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;	/* PID 1 is gone with requests it sent ahead: it says why */
		if (sent < 0) {
			rc = -1;
			e = errno;
			break;
		}
	}
	if (st.own >= 0)
		close(st.own);
	if (st.helper >= 0)
		close(st.helper);
	reap(st.helper_pid);
	errno = e;
	return rc;
}

int idm_probe(const char *path, const char **what)
{
	*what = "make the idmap's user namespace for";
	struct ns_ids ids;
	pid_t child;
	ns_root_ids(&ids);
	int userns = helper_userns(&ids, &child), tree = -1;
	reap(child);
	if (userns < 0)
		return -1;
	*what = "open";
	int sfd = open_nofollow_abs(path);
	if (sfd >= 0) {
		/* The filesystem at path, not what is mounted below it. */
		const struct bind_opts o = {.ro = 1, .idmap = 1, .userns_fd = userns};
		tree = bind_clone(sfd, &o, what);
	}
	int e = errno;
	if (sfd >= 0)
		close(sfd);
	if (tree >= 0)
		close(tree);
	close(userns);
	errno = e;
	return tree < 0 ? -1 : 0;
}
