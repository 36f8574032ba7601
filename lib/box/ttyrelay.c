#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/diag.h"
#include "box/ttyrelay.h"

#define RELAY_BUF 4096

void tty_relay_init(struct tty_relay *r)
{
	memset(r, 0, sizeof *r);
	r->in = 0;
	r->out = 1;
	r->master = -1;
}

/* The master, non-blocking (with every slave closed a read ends in EIO
 * once the pty's buffer is flushed, and nothing may hold the supervisor),
 * and SIGPIPE ignored until tty_relay_end(): a closed stdout must not kill
 * us with the caller's terminal raw. */
static void take_master(struct tty_relay *r, int master)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	r->master = master;
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	sigaction(SIGPIPE, &ign, &r->old_pipe);
}

void tty_relay_begin(struct tty_relay *r, int master)
{
	struct termios raw;
	r->buf = malloc(RELAY_BUF);
	/* Without a buffer the box's output is still relayed, not the keys. */
	r->in_open = r->buf != NULL;
	take_master(r, master);
	if (tcgetattr(r->in, &r->saved) == 0) {
		/* Every key goes to the box as typed: the box's own pty echoes,
		 * edits lines and turns ^C, ^Z into signals for the box. */
		raw = r->saved;
		cfmakeraw(&raw);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(r->in, TCSADRAIN, &raw) == 0)
			r->raw = 1;
	}
	tty_relay_resize(r);
}

void tty_relay_fds(const struct tty_relay *r, struct pollfd p[2])
{
	p[0] = (struct pollfd){.fd = r->master >= 0 && r->in_open && !r->len ? r->in : -1,
			       .events = POLLIN};
	p[1] = (struct pollfd){.fd = r->master, .events = POLLIN | (r->len ? POLLOUT : 0)};
}

/* What the box wrote, to fd 1. Returns 0 once the pty has no slave left
 * open (EIO) or nothing to read now. */
static int copy_out(struct tty_relay *r)
{
	char chunk[8192];
	ssize_t n = read(r->master, chunk, sizeof chunk);
	if (n > 0) {
		/* The caller's own terminal: a write that waits for it is the
		 * flow control the caller asked for. */
		(void)write_all(r->out, chunk, (size_t)n);
		return 1;
	}
	return 0;
}

void tty_relay_pump(struct tty_relay *r, const struct pollfd p[2])
{
	if (r->master < 0)
		return;
	if (p[0].fd >= 0 && p[0].revents) {
		ssize_t n = read(r->in, r->buf, RELAY_BUF);
		if (n > 0) {
			r->len = (size_t)n;
			r->off = 0;
		} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			/* The caller's terminal hung up: so does the box's, which
			 * sends its session SIGHUP as a real terminal would. */
			r->in_open = 0;
			tty_relay_end(r);
			return;
		}
	}
	if (p[1].revents & POLLOUT && r->len) {
		ssize_t n = write(r->master, r->buf + r->off, r->len);
		if (n > 0) {
			r->off += (size_t)n;
			r->len -= (size_t)n;
		} else if (n < 0 && errno != EINTR && errno != EAGAIN) {
			r->len = 0;
		}
	}
	if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
		if (!copy_out(r) && p[1].revents & (POLLHUP | POLLERR)) {
			/* No slave is open any more; the box is ending. Stop
			 * polling a master that would report this forever. */
			tty_relay_end(r);
		}
	}
}

void tty_relay_drain(struct tty_relay *r, int master)
{
	take_master(r, master);
	tty_relay_end(r);
}

void tty_relay_resize(struct tty_relay *r)
{
	struct winsize ws;
	if (r->master >= 0 && ioctl(r->in, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(r->master, TIOCSWINSZ, &ws);
}

void tty_relay_end(struct tty_relay *r)
{
	if (r->master >= 0) {
		while (copy_out(r))
			;
		close(r->master);
		r->master = -1;
		sigaction(SIGPIPE, &r->old_pipe, NULL);
		free(r->buf);
		r->buf = NULL;
		r->len = 0;
	}
	if (r->raw) {
		(void)tcsetattr(r->in, TCSADRAIN, &r->saved);
		r->raw = 0;
	}
}
