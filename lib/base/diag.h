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

void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `error: <area>: <message>`; area is one of box image pull registry
 * manifest oci sandbox. */
void fatal(const char *area, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `kern: sandbox setup failed: <why>` */
void setup_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Any other fixed-prefix line (banner, OOM sentence, cannot start, exec
 * refusal): written as given, one write. quiet_class lines are dropped under
 * KERN_QUIET. */
void diag_line(int quiet_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_vline(int quiet_class, const char *prefix, const char *fmt, va_list ap);

/* Write all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

#endif
