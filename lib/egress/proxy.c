/* The egress proxy's event loop. A tunnel moves through HEAD (reading the
 * request head), RESOLVE (a resolver thread vets the name), CONNECT (trying
 * the vetted addresses in turn) and RELAY (bytes both ways, half-close on
 * EOF). Refusals are answered with one fixed status line and the socket
 * lingers briefly so the client reads it instead of a reset. Memory is
 * bounded: 128 tunnels with two buffers of about 16 KiB each, 128
 * lingering refusals, 256 outstanding resolutions. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fdutil.h"
#include "egress/head.h"
#include "egress/match.h"
#include "egress/pool.h"
#include "egress/proxy.h"

#define BUF_SIZE EGRESS_HEAD_MAX	/* the head buffer doubles as the client->upstream buffer */
#define UP_SIZE EGRESS_FORWARD_MAX	/* ... and holds the head as forwarded */
#define LINGERS 128
#define MAX_JOBS 256
#define RESOLVERS 4
#define LINGER_BYTES (64 << 10)

static const char resp_200[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
static const char resp_400[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
static const char resp_403[] = "HTTP/1.1 403 Forbidden\r\n\r\n";
static const char resp_411[] = "HTTP/1.1 411 Length Required\r\n\r\n";
static const char resp_502[] = "HTTP/1.1 502 Bad Gateway\r\n\r\n";
static const char resp_503[] = "HTTP/1.1 503 Service Unavailable\r\n\r\n";

/* Milliseconds; the test build may shorten them (KERN_EGRESS_TEST_TIMEOUTS). */
static int64_t head_read_ms = 30000, head_total_ms = 30000, idle_ms = 300000;
static const int64_t connect_total_ms = 30000, connect_each_ms = 10000, linger_ms = 2000;

enum state { T_FREE, T_HEAD, T_RESOLVE, T_CONNECT, T_RELAY };

/* Bytes waiting in one direction: buf[off..len). */
struct half {
	size_t off, len;
	int eof;	/* the source sent EOF */
	int shut;	/* ... and we passed it on with shutdown(SHUT_WR) */
};

struct tunnel {
	enum state st;
	unsigned gen;			/* bumped on close: events for an old socket are dropped */
	int cfd, ufd;
	uint32_t cmask, umask;		/* current epoll interest */
	char *buf;			/* [0, UP_SIZE): to upstream; [UP_SIZE, UP_SIZE + BUF_SIZE): to client */
	struct half h[2];		/* 0: client->upstream, 1: upstream->client */
	size_t have;			/* head bytes consumed */
	int64_t t_start, t_read, t_active, t_deadline, t_attempt;
	struct egress_request req;
	/* A plain request: its body's bytes still to forward. Once they are,
	 * whatever else the client sends is read and dropped: one checked
	 * request per connection. */
	int plain;
	unsigned long long body_left;
	struct egress_job *job;
	struct egress_addrs addrs;
	int next_addr;
};

struct refusal {
	int fd;
	int64_t until;
	size_t drained;
};

enum kind { K_LISTEN = 1, K_CTL, K_POOL, K_CLIENT, K_UPSTREAM, K_LINGER };

static struct tunnel tunnels[EGRESS_TUNNELS];
static struct refusal lingers[LINGERS];
static int ep = -1, lfd = -1, ctl_fd = -1, pool_fd = -1;
static int64_t listen_paused_until;
static int jobs_out;
static char *const *allow_list;
static int allow_n;
static char scratch[16384];
static char fwd[UP_SIZE];	/* a plain request's head as forwarded */

/* Event data: kind, the slot's generation, the slot. */
static uint64_t tag(enum kind k, unsigned idx, unsigned gen)
{
	return ((uint64_t)k << 56) | ((uint64_t)(gen & 0xffffff) << 32) | idx;
}

static int ep_add(int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* Sets a socket's interest. No interest means not registered at all: a
 * hung-up socket is reported whatever the mask says, and one we cannot
 * serve yet would make the loop spin. */
static void ep_mod(int fd, uint32_t *cur, uint32_t want, uint64_t data)
{
	struct epoll_event ev = {.events = want, .data.u64 = data};
	if (*cur == want)
		return;
	if (want == 0)
		(void)epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	else if (epoll_ctl(ep, *cur ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
		return;
	*cur = want;
}

/* --- lingering refusals ------------------------------------------------ */

/* Sends a refusal and lets the socket drain for a moment: closing with
 * unread request bytes would reset the connection and could destroy the
 * status line before the client reads it. */
static void refuse_fd(int fd, const char *resp, size_t len, int64_t now)
{
	(void)send(fd, resp, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
	for (unsigned i = 0; i < LINGERS; i++) {
		if (lingers[i].fd >= 0)
			continue;
		if (ep_add(fd, EPOLLIN, tag(K_LINGER, i, 0)) < 0)
			break;
		lingers[i] = (struct refusal){.fd = fd, .until = now + linger_ms, .drained = 0};
		return;
	}
	/* No room to linger: take what already arrived, so the close is a
	 * FIN after the status line rather than a reset. */
	for (int k = 0; k < 4 && recv(fd, scratch, sizeof scratch, MSG_DONTWAIT) > 0; k++)
		;
	close(fd);
}

static void linger_close(unsigned i)
{
	close(lingers[i].fd);
	lingers[i].fd = -1;
}

static void linger_event(unsigned i)
{
	for (;;) {
		ssize_t n = recv(lingers[i].fd, scratch, sizeof scratch, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0 || (lingers[i].drained += (size_t)n) > LINGER_BYTES) {
			linger_close(i);
			return;
		}
	}
}

/* --- tunnels ----------------------------------------------------------- */

static void tunnel_close(struct tunnel *t)
{
	if (t->job) {
		egress_pool_cancel(t->job);
		t->job = NULL;
	}
	if (t->cfd >= 0)
		close(t->cfd);
	if (t->ufd >= 0)
		close(t->ufd);
	free(t->buf);
	unsigned gen = t->gen + 1;
	memset(t, 0, sizeof *t);
	t->gen = gen;
	t->st = T_FREE;
	t->cfd = t->ufd = -1;
}

static void tunnel_refuse(struct tunnel *t, const char *resp, size_t len, int64_t now)
{
	int fd = t->cfd;
	t->cfd = -1;
	/* Stop watching it here before the linger table takes it over. */
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	tunnel_close(t);
	refuse_fd(fd, resp, len, now);
}

#define REFUSE(t, r, now) tunnel_refuse((t), (r), sizeof(r) - 1, (now))

static void tunnel_interest(struct tunnel *t)
{
	unsigned idx = (unsigned)(t - tunnels);
	uint32_t c = 0, u = 0;
	switch (t->st) {
	case T_HEAD:
		c = EPOLLIN;
		break;
	case T_CONNECT:
		u = EPOLLOUT;
		break;
	case T_RELAY:
		if (t->h[0].off == t->h[0].len && !t->h[0].eof)
			c |= EPOLLIN;
		if (t->h[1].off < t->h[1].len)
			c |= EPOLLOUT;
		if (t->h[1].off == t->h[1].len && !t->h[1].eof)
			u |= EPOLLIN;
		if (t->h[0].off < t->h[0].len)
			u |= EPOLLOUT;
		break;
	default:
		break;
	}
	if (t->cfd >= 0)
		ep_mod(t->cfd, &t->cmask, c, tag(K_CLIENT, idx, t->gen));
	if (t->ufd >= 0)
		ep_mod(t->ufd, &t->umask, u, tag(K_UPSTREAM, idx, t->gen));
}

/* Writes what direction d holds; passes an EOF on once all is written.
 * Returns -1 when the destination is gone. */
static int flush(struct tunnel *t, int d, int64_t now)
{
	struct half *h = &t->h[d];
	int dst = d ? t->cfd : t->ufd;
	char *buf = t->buf + (d ? UP_SIZE : 0);
	while (h->off < h->len) {
		ssize_t n = send(dst, buf + h->off, h->len - h->off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		h->off += (size_t)n;
		t->t_active = now;
	}
	h->off = h->len = 0;
	if (h->eof && !h->shut) {
		shutdown(dst, SHUT_WR);
		h->shut = 1;
	}
	return 0;
}

/* Reads into direction d's empty buffer and forwards at once; while a
 * full buffer goes straight out, reads again (a few times) before going
 * back to epoll. */
static int fill(struct tunnel *t, int d, int64_t now)
{
	struct half *h = &t->h[d];
	int src = d ? t->ufd : t->cfd;
	for (int round = 0; round < 4; round++) {
		if (h->off < h->len || h->eof)
			return 0;
		/* A plain request's body goes up to its end and not a byte past. */
		size_t want = BUF_SIZE;
		int body = d == 0 && t->plain, drop = body && t->body_left == 0;
		if (body && t->body_left > 0 && t->body_left < want)
			want = (size_t)t->body_left;
		ssize_t n = recv(src, t->buf + (d ? UP_SIZE : 0), want, 0);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (n == 0)
			h->eof = 1;
		else
			t->t_active = now;
		if (drop && n > 0)
			continue;
		if (body)
			t->body_left -= (size_t)n;
		h->off = 0;
		h->len = (size_t)n;
		if (flush(t, d, now) < 0)
			return -1;
		if ((size_t)n < want)
			return 0;
	}
	return 0;
}

static void connect_next(struct tunnel *t, int64_t now);

static void connected(struct tunnel *t, int64_t now)
{
	t->st = T_RELAY;
	t->t_active = now;
	if (t->req.is_connect) {
		memcpy(t->buf + UP_SIZE, resp_200, sizeof resp_200 - 1);
		t->h[1].off = 0;
		t->h[1].len = sizeof resp_200 - 1;
	}
	/* A plain request's head is already waiting in h[0]. */
	if (flush(t, 1, now) < 0 || flush(t, 0, now) < 0) {
		tunnel_close(t);
		return;
	}
	tunnel_interest(t);
}

static void connect_next(struct tunnel *t, int64_t now)
{
	unsigned idx = (unsigned)(t - tunnels);
	if (t->ufd >= 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, t->ufd, NULL);
		close(t->ufd);
		t->ufd = -1;
		t->umask = 0;
	}
	while (t->next_addr < t->addrs.n) {
		const union egress_sockaddr *a = &t->addrs.a[t->next_addr++];
		socklen_t len = a->sa.sa_family == AF_INET ? sizeof a->in : sizeof a->in6;
		int fd = socket(a->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, &a->sa, len) < 0 && errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		if (ep_add(fd, EPOLLOUT, tag(K_UPSTREAM, idx, t->gen)) < 0) {
			close(fd);
			continue;
		}
		t->ufd = fd;
		t->umask = EPOLLOUT;
		t->st = T_CONNECT;
		t->t_attempt = now + connect_each_ms;
		return;
	}
	REFUSE(t, resp_502, now);
}

static void head_complete(struct tunnel *t, int64_t now)
{
	struct egress_request *r = &t->req;
	if (egress_head_parse(t->buf, t->have, r) != 0) {
		REFUSE(t, resp_400, now);
		return;
	}
	if ((r->port != 80 && r->port != 443) || r->bracketed ||
	    !egress_host_allowed(r->host, allow_list, allow_n)) {
		REFUSE(t, resp_403, now);
		return;
	}
	/* A plain request goes upstream in origin form with the Host that was
	 * checked, and alone (egress_head_forward); a chunked body's end is
	 * not tracked here, so one is refused. CONNECT's head goes nowhere. */
	size_t fwd_len = 0;
	if (!r->is_connect) {
		if (r->chunked) {
			REFUSE(t, resp_411, now);
			return;
		}
		fwd_len = egress_head_forward(t->buf, t->have, r, fwd, sizeof fwd);
		if (fwd_len == 0) {
			REFUSE(t, resp_400, now);
			return;
		}
	}
	struct egress_job *j = jobs_out < MAX_JOBS ? calloc(1, sizeof *j) : NULL;
	if (!j) {
		REFUSE(t, resp_502, now);
		return;
	}
	strcpy(j->host, r->host);
	j->port = r->port;
	j->slot = (unsigned)(t - tunnels);
	t->job = j;
	jobs_out++;
	egress_pool_submit(j);
	memcpy(t->buf, fwd, fwd_len);
	t->h[0].off = 0;
	t->h[0].len = fwd_len;
	t->plain = !r->is_connect;
	t->body_left = r->length;
	t->st = T_RESOLVE;
	t->t_deadline = now + connect_total_ms;
	tunnel_interest(t);
}

/* Reads the head without consuming a byte past its end: peek, find the
 * end, then take exactly that much. What follows stays in the socket for
 * the tunnel. */
static void head_event(struct tunnel *t, int64_t now)
{
	size_t end = 0;
	ssize_t n = recv(t->cfd, t->buf + t->have, EGRESS_HEAD_MAX - t->have, MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		tunnel_close(t);
		return;
	}
	enum egress_scan s = egress_head_scan(t->buf, t->have, t->have + (size_t)n, &end);
	if (s == EGRESS_HEAD_BAD) {
		REFUSE(t, resp_400, now);
		return;
	}
	size_t take = s == EGRESS_HEAD_DONE ? end - t->have : (size_t)n;
	while (take > 0) {
		ssize_t m = recv(t->cfd, t->buf + t->have, take, 0);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0) {
			tunnel_close(t);
			return;
		}
		t->have += (size_t)m;
		take -= (size_t)m;
	}
	t->t_read = now;
	if (s == EGRESS_HEAD_DONE)
		head_complete(t, now);
	else if (t->have >= EGRESS_HEAD_MAX)
		REFUSE(t, resp_400, now);
}

static void relay_event(struct tunnel *t, int upstream, uint32_t ev, int64_t now)
{
	/* Direction read from this socket, and the one written to it. */
	int rd = upstream ? 1 : 0, wr = upstream ? 0 : 1;
	if (ev & EPOLLERR) {
		tunnel_close(t);
		return;
	}
	if ((ev & EPOLLOUT) && flush(t, wr, now) < 0) {
		tunnel_close(t);
		return;
	}
	if ((ev & (EPOLLIN | EPOLLHUP)) && fill(t, rd, now) < 0) {
		tunnel_close(t);
		return;
	}
	/* A fully shut socket that still had bytes to receive will never take them. */
	if ((ev & EPOLLHUP) && !t->h[wr].shut) {
		tunnel_close(t);
		return;
	}
	if (t->h[0].shut && t->h[1].shut) {
		tunnel_close(t);
		return;
	}
	tunnel_interest(t);
}

static void tunnel_event(unsigned idx, int upstream, uint32_t ev, int64_t now)
{
	struct tunnel *t = &tunnels[idx];
	switch (t->st) {
	case T_HEAD:
		if (ev & EPOLLERR)
			tunnel_close(t);
		else
			head_event(t, now);
		break;
	case T_RESOLVE:
		/* Only errors and hang-ups arrive here: the client gave up. */
		tunnel_close(t);
		break;
	case T_CONNECT:
		if (!upstream) {
			tunnel_close(t);
		} else {
			int err = 0;
			socklen_t len = sizeof err;
			if (getsockopt(t->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0)
				connect_next(t, now);
			else
				connected(t, now);
		}
		break;
	case T_RELAY:
		relay_event(t, upstream, ev, now);
		break;
	default:
		break;
	}
}

static void pool_event(int64_t now)
{
	struct egress_job *j;
	while ((j = egress_pool_done())) {
		struct tunnel *t = j->slot < EGRESS_TUNNELS ? &tunnels[j->slot] : NULL;
		jobs_out--;
		if (t && t->st == T_RESOLVE && t->job == j) {
			t->job = NULL;
			if (j->rc < 0 || j->addrs.n == 0) {
				REFUSE(t, resp_502, now);
			} else {
				t->addrs = j->addrs;
				t->next_addr = 0;
				connect_next(t, now);
			}
		}
		free(j);
	}
}

static void accept_event(int64_t now)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* Out of descriptors: stop accepting for a moment instead of spinning. */
				uint32_t cur = EPOLLIN;
				ep_mod(lfd, &cur, 0, tag(K_LISTEN, 0, 0));
				listen_paused_until = now + 100;
			}
			return;
		}
		struct tunnel *t = NULL;
		for (unsigned i = 0; i < EGRESS_TUNNELS && !t; i++)
			if (tunnels[i].st == T_FREE)
				t = &tunnels[i];
		char *buf = t ? malloc((size_t)UP_SIZE + BUF_SIZE) : NULL;
		if (!buf) {
			refuse_fd(fd, resp_503, sizeof resp_503 - 1, now);
			continue;
		}
		unsigned gen = t->gen;
		memset(t, 0, sizeof *t);
		t->gen = gen;
		t->cfd = fd;
		t->ufd = -1;
		t->buf = buf;
		t->st = T_HEAD;
		t->t_start = t->t_read = now;
		if (ep_add(fd, EPOLLIN, tag(K_CLIENT, (unsigned)(t - tunnels), t->gen)) < 0) {
			tunnel_close(t);
			continue;
		}
		t->cmask = EPOLLIN;
	}
}

/* The listening socket arrives once, with SCM_RIGHTS; the answer carries
 * our pid so the supervisor can reap us at teardown. From then on ctl is
 * the lifeline: its end of file (the supervisor closed it or died) ends
 * the proxy. Returns -1 when the proxy should exit. */
static int ctl_event(void)
{
	if (lfd >= 0) {
		char c;
		ssize_t n = recv(ctl_fd, &c, 1, MSG_DONTWAIT);
		return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : n > 0 ? 0 : -1;
	}
	char byte = 0;
	int got = -1, nfds;
	long n = recv_fds(ctl_fd, &byte, 1, &got, 1, &nfds);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	char ack[1 + sizeof(pid_t)];
	pid_t self = getpid();
	memcpy(ack + 1, &self, sizeof self);
	if (n <= 0 || byte != 'L' || got < 0) {
		if (got >= 0)
			close(got);
		/* 'X': the caller could not make a listener and will reap us. */
		if (n > 0 && byte == 'X') {
			ack[0] = 'X';
			(void)send(ctl_fd, ack, sizeof ack, MSG_NOSIGNAL);
		}
		return -1;
	}
	int listening = 0;
	socklen_t len = sizeof listening;
	if (getsockopt(got, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening ||
	    fcntl(got, F_SETFL, O_NONBLOCK) < 0 || ep_add(got, EPOLLIN, tag(K_LISTEN, 0, 0)) < 0) {
		close(got);
		(void)send(ctl_fd, "E", 1, MSG_NOSIGNAL);
		return -1;
	}
	lfd = got;
	ack[0] = 'A';
	(void)send(ctl_fd, ack, sizeof ack, MSG_NOSIGNAL);
	return 0;
}

/* Deadlines: handles what expired, returns ms until the next one (-1 none). */
static int timers(int64_t now)
{
	int64_t next = INT64_MAX;
#define NEXT(x) do { if ((x) < next) next = (x); } while (0)
	if (lfd >= 0 && listen_paused_until) {
		if (now >= listen_paused_until) {
			uint32_t cur = 0;
			ep_mod(lfd, &cur, EPOLLIN, tag(K_LISTEN, 0, 0));
			listen_paused_until = 0;
		} else {
			NEXT(listen_paused_until);
		}
	}
	for (unsigned i = 0; i < LINGERS; i++) {
		if (lingers[i].fd < 0)
			continue;
		if (now >= lingers[i].until)
			linger_close(i);
		else
			NEXT(lingers[i].until);
	}
	for (unsigned i = 0; i < EGRESS_TUNNELS; i++) {
		struct tunnel *t = &tunnels[i];
		int64_t due;
		switch (t->st) {
		case T_HEAD:
			due = t->t_start + head_total_ms;
			if (t->t_read + head_read_ms < due)
				due = t->t_read + head_read_ms;
			if (now >= due)
				tunnel_close(t);	/* slow or silent client: just hang up */
			else
				NEXT(due);
			break;
		case T_RESOLVE:
			if (now >= t->t_deadline)
				REFUSE(t, resp_502, now);
			else
				NEXT(t->t_deadline);
			break;
		case T_CONNECT:
			if (now >= t->t_deadline) {
				REFUSE(t, resp_502, now);
			} else if (now >= t->t_attempt) {
				connect_next(t, now);
				if (t->st == T_CONNECT)
					NEXT(t->t_attempt < t->t_deadline ? t->t_attempt : t->t_deadline);
			} else {
				NEXT(t->t_attempt < t->t_deadline ? t->t_attempt : t->t_deadline);
			}
			break;
		case T_RELAY:
			if (now >= t->t_active + idle_ms)
				tunnel_close(t);
			else
				NEXT(t->t_active + idle_ms);
			break;
		default:
			break;
		}
	}
#undef NEXT
	if (next == INT64_MAX)
		return -1;
	return next - now > 60000 ? 60000 : (int)(next - now);
}

#ifdef KERN_TEST_BUILD
/* KERN_EGRESS_TEST_TIMEOUTS=HEAD_READ_MS,HEAD_TOTAL_MS,IDLE_MS lets the
 * tests watch a timeout fire in seconds. Test build only. */
static void test_timeouts(void)
{
	const char *v = getenv("KERN_EGRESS_TEST_TIMEOUTS");
	int64_t ms[3];
	char *end;
	if (!v)
		return;
	for (int i = 0; i < 3; i++) {
		ms[i] = strtoll(v, &end, 10);
		if (end == v || ms[i] <= 0 || *end != (i < 2 ? ',' : 0))
			return;
		v = end + 1;
	}
	head_read_ms = ms[0];
	head_total_ms = ms[1];
	idle_ms = ms[2];
}
#endif

int egress_proxy_run(int ctl, char *const *allow, int nallow)
{
	struct epoll_event evs[64];
	allow_list = allow;
	allow_n = nallow;
	ctl_fd = ctl;
#ifdef KERN_TEST_BUILD
	test_timeouts();
#endif
	for (unsigned i = 0; i < EGRESS_TUNNELS; i++)
		tunnels[i].cfd = tunnels[i].ufd = -1;
	for (unsigned i = 0; i < LINGERS; i++)
		lingers[i].fd = -1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	pool_fd = egress_pool_start(RESOLVERS);
	if (ep < 0 || pool_fd < 0 || ep_add(ctl_fd, EPOLLIN, tag(K_CTL, 0, 0)) < 0 ||
	    ep_add(pool_fd, EPOLLIN, tag(K_POOL, 0, 0)) < 0)
		return -1;
	(void)send(ctl_fd, "R", 1, MSG_NOSIGNAL);

	for (;;) {
		int wait = timers(now_ms());
		int n = epoll_wait(ep, evs, 64, wait);
		if (n < 0 && errno != EINTR)
			return -1;
		int64_t now = now_ms();
		for (int i = 0; i < n; i++) {
			enum kind k = (enum kind)(evs[i].data.u64 >> 56);
			unsigned gen = (unsigned)(evs[i].data.u64 >> 32) & 0xffffff;
			unsigned idx = (unsigned)evs[i].data.u64;
			switch (k) {
			case K_LISTEN:
				accept_event(now);
				break;
			case K_CTL:
				if (ctl_event() < 0)
					return 0;
				break;
			case K_POOL:
				pool_event(now);
				break;
			case K_CLIENT:
			case K_UPSTREAM:
				if (idx < EGRESS_TUNNELS && (tunnels[idx].gen & 0xffffff) == gen)
					tunnel_event(idx, k == K_UPSTREAM, evs[i].events, now);
				break;
			case K_LINGER:
				if (idx < LINGERS && lingers[idx].fd >= 0)
					linger_event(idx);
				break;
			}
		}
	}
}
