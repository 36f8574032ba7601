/* Diagnostics: the only lines kern writes to stderr (box-cli.md §6.2).
 * Every line is built in memory and written with ONE write(2), so a workload
 * flooding the same stderr pipe can never split a kern line. */
#ifndef KERN_DIAG_H
#define KERN_DIAG_H

#include <stdarg.h>

/* Exit codes of box-cli.md §6.1. */
enum {
	EXIT_CLI = 1,		/* usage, bad reference, pull failure, duplicate name */
	EXIT_SETUP = 125,	/* the box could not be set up */
	EXIT_NOEXEC = 126,	/* command found but not executable */
	EXIT_NOTFOUND = 127,	/* command not found or other execve error */
};

/* Set by diag_init() from KERN_QUIET, or by -q/--quiet. Silences notes,
 * warnings and the security banner; never fatal lines. */
extern int diag_quiet;
/* In PID 1 of a box: setup_failed() lines go to the supervisor through
 * this status pipe (prefixed "125 ") instead of stderr; -1 otherwise. */
extern int diag_status_fd;

void diag_init(void);
/* Called with every line of class 0 (fatal, setup failure, hint, the
 * outcome lines) as written to stderr, without its newline; NULL for
 * none. kern-oci copies the errors to the engine's --log with it. */
extern void (*diag_tee)(const char *line);

void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `error: <area>: <message>`; area is one of box image pull registry
 * manifest oci sandbox. */
void fatal(const char *area, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `kern: sandbox setup failed: <why>`; in PID 1 (diag_status_fd set) it goes
 * to the supervisor as status_setup_failed() on that pipe instead. */
void setup_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fatal() and setup_failed() with `: <strerror(errno)>` appended (errno as
 * it was on entry, and left so): name the call and the path in fmt,
 * `fatal_errno("box", "open %s", path)`. For a library function that reports
 * and returns -1 to a caller who decides. */
void fatal_errno(const char *area, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void setup_failed_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Diagnostics that end the program (box-cli.md §6.1 exit codes, §6.2 lines).
 * die(): the fatal line, `x` on the alive pipe (alive_fail()), exit(EXIT_CLI):
 * a CLI failure before any box, in the process kern started as (stdio is
 * flushed, as a return from main would).
 * die_setup(): the setup-failure line (to the status pipe in PID 1), `x` on
 * the alive pipe, _exit(EXIT_SETUP): also in the forked processes that build
 * a box, so nothing stdio buffered in a parent is written twice.
 * The _errno forms append `: <strerror(errno)>` as fatal_errno() does. */
void die(const char *area, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void die_errno(const char *area, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* The hint line of a fatal() just printed, then the end of die():
 * `fatal(area, ...); die_hint("run `kern pull %s` first", ref);`. */
void die_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* The end of die() when a callee printed the fatal line already (a library
 * function that reports and returns -1, image_resolve()). */
void die_reported(void) __attribute__((noreturn));
void die_setup(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die_setup_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The status pipe (report.h): how PID 1, a chain step or a detached box's
 * supervisor hands its outcome to the process that prints it.
 * status_send(): `<code> <text>` in one write, text as given (lines joined
 * with '\n', no final newline; "" for a code alone). The one place the
 * pipe's message is formatted.
 * status_setup_failed(): the 125 message of a setup failure, `125 kern:
 * sandbox setup failed: <why>` and, when hint is not NULL, `\nhint: <hint>`;
 * a line break inside why becomes a space. Both do nothing when fd < 0. */
void status_send(int fd, int code, const char *text);
void status_setup_failed(int fd, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The alive pipe (box-cli.md §5, KERN_ALIVE_FD): ALIVE_STARTED first thing,
 * ALIVE_FAILED before kern exits 1, 125, 126 or 127; EOF after ALIVE_STARTED
 * alone means the workload started. */
enum { ALIVE_STARTED = 'A', ALIVE_FAILED = 'x' };
/* Write byte on fd (nothing when fd < 0): the one place the pipe is written. */
void alive_write(int fd, char byte);
/* The alive descriptor this process answers for, -1 when it answers for
 * none (it handed the pipe on, or closed it). Until told, alive_fail() uses
 * KERN_ALIVE_FD from the environment: the chain's steps inherit it there. */
void alive_remember(int fd);
/* ALIVE_FAILED on the descriptor above, if any. */
void alive_fail(void);
/* Any other fixed-prefix line (banner, OOM sentence, cannot start, exec
 * refusal): written as given, one write. quiet_class lines are dropped under
 * KERN_QUIET. */
void diag_line(int quiet_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_vline(int quiet_class, const char *prefix, const char *fmt, va_list ap);

/* Write all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

#endif
