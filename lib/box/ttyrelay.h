/* The host's side of -t/--tty: the caller's terminal in raw mode, bytes
 * relayed both ways between it and the master of the box's pty (pty.h),
 * the window size passed on, the terminal's modes restored at the end.
 * The supervisor (kern box) and kern exec drive it from their own poll
 * loops, which also watch signals and the box. */
#ifndef KERN_TTYRELAY_H
#define KERN_TTYRELAY_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <termios.h>

struct tty_relay {
	int in, out;		/* the caller's terminal (fd 0) and fd 1 */
	int master;		/* the box's pty master; -1 when not relaying */
	int in_open;		/* fd 0 has not hung up */
	int raw;		/* saved holds the modes to restore */
	struct termios saved;
	struct sigaction old_pipe;
	char *buf;		/* caller -> box, waiting for room in the pty */
	size_t len, off;
};

/* Before anything: not relaying. Small: it sits in the supervisor's
 * frame, which PID 1 is cloned from, and every page that frame touches is
 * a page fault on each box start. */
void tty_relay_init(struct tty_relay *r);
/* Take the master (made non-blocking: the box may stop reading its input
 * and must never stall the caller's side) and put fd 0 in raw mode. */
void tty_relay_begin(struct tty_relay *r, int master);
/* The two poll entries the relay needs now (fd -1 where none). */
void tty_relay_fds(const struct tty_relay *r, struct pollfd p[2]);
/* Move what poll said is ready. */
void tty_relay_pump(struct tty_relay *r, const struct pollfd p[2]);
/* SIGWINCH: the caller's window size to the box's pty. */
void tty_relay_resize(struct tty_relay *r);
/* The box is gone: copy out what its pty still holds, restore fd 0's
 * modes, close the master. Safe to call when not relaying. */
void tty_relay_end(struct tty_relay *r);
/* The box ended before the relay began (its pty came among PID 1's last
 * messages): copy out what the pty holds and close it; fd 0's modes were
 * never changed. */
void tty_relay_drain(struct tty_relay *r, int master);

#endif
