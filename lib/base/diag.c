/* One write per line, stderr only; see diag.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/env.h"

int diag_quiet;
int diag_status_fd = -1;
void (*diag_tee)(const char *line);

void diag_init(void)
{
	if (env_get("KERN_QUIET"))
		diag_quiet = 1;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void diag_vline(int quiet_class, const char *prefix, const char *fmt, va_list ap)
{
	char line[4096];
	int saved = errno;
	if (quiet_class && diag_quiet)
		return;
	size_t n = (size_t)snprintf(line, sizeof line, "%s", prefix);
	if (n < sizeof line) {
		int m = vsnprintf(line + n, sizeof line - n, fmt, ap);
		if (m > 0)
			n += (size_t)m;
	}
	if (n > sizeof line - 2)
		n = sizeof line - 2;
	/* A message must never smuggle a second line into the stream. */
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	if (!quiet_class && diag_tee) {
		line[n] = 0;
		diag_tee(line);
	}
	line[n++] = '\n';
	(void)write_all(2, line, n);
	errno = saved;
}

void diag_line(int quiet_class, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vline(quiet_class, "", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vline(1, "kern: note: ", fmt, ap);
	va_end(ap);
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vline(1, "kern: warning: ", fmt, ap);
	va_end(ap);
}

static void vfatal(const char *area, const char *fmt, va_list ap)
{
	char prefix[32];
	snprintf(prefix, sizeof prefix, "error: %s: ", area);
	diag_vline(0, prefix, fmt, ap);
}

/* fmt's text, then `: <strerror(err)>`, as the fatal line of area. */
static void vfatal_errno(const char *area, int err, const char *fmt, va_list ap)
{
	char msg[3072];
	vsnprintf(msg, sizeof msg, fmt, ap);
	fatal(area, "%s: %s", msg, strerror(err));
}

void fatal(const char *area, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfatal(area, fmt, ap);
	va_end(ap);
}

void fatal_errno(const char *area, const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vfatal_errno(area, err, fmt, ap);
	va_end(ap);
	errno = err;
}

void die(const char *area, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfatal(area, fmt, ap);
	va_end(ap);
	alive_fail();
	exit(EXIT_CLI);
}

void die_errno(const char *area, const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vfatal_errno(area, err, fmt, ap);
	va_end(ap);
	alive_fail();
	exit(EXIT_CLI);
}

void hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vline(0, "hint: ", fmt, ap);
	va_end(ap);
}

void die_reported(void)
{
	alive_fail();
	exit(EXIT_CLI);
}

void die_hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vline(0, "hint: ", fmt, ap);
	va_end(ap);
	alive_fail();
	exit(EXIT_CLI);
}

static const char setup_prefix[] = "kern: sandbox setup failed: ";

void status_send(int fd, int code, const char *text)
{
	char msg[4096];
	if (fd < 0)
		return;
	int n = snprintf(msg, sizeof msg, "%d %s", code, text);
	if (n < 0)
		return;
	if ((size_t)n > sizeof msg - 1)
		n = (int)sizeof msg - 1;
	(void)write_all(fd, msg, (size_t)n);
}

static void vstatus_setup_failed(int fd, const char *hint, const char *fmt, va_list ap)
{
	char why[3000], text[3600];
	vsnprintf(why, sizeof why, fmt, ap);
	for (char *c = why; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	snprintf(text, sizeof text, "%s%s%s%s", setup_prefix, why, hint ? "\nhint: " : "",
		 hint ? hint : "");
	status_send(fd, EXIT_SETUP, text);
}

void status_setup_failed(int fd, const char *hint, const char *fmt, ...)
{
	va_list ap;
	if (fd < 0)
		return;
	va_start(ap, fmt);
	vstatus_setup_failed(fd, hint, fmt, ap);
	va_end(ap);
}

static void vsetup_failed(const char *fmt, va_list ap)
{
	if (diag_status_fd >= 0)
		vstatus_setup_failed(diag_status_fd, NULL, fmt, ap);
	else
		diag_vline(0, setup_prefix, fmt, ap);
}

/* fmt's text, then `: <strerror(err)>`, as a setup failure. */
static void vsetup_failed_errno(int err, const char *fmt, va_list ap)
{
	char msg[3072];
	vsnprintf(msg, sizeof msg, fmt, ap);
	setup_failed("%s: %s", msg, strerror(err));
}

void setup_failed(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsetup_failed(fmt, ap);
	va_end(ap);
}

void setup_failed_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vsetup_failed_errno(err, fmt, ap);
	va_end(ap);
	errno = err;
}

void die_setup(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsetup_failed(fmt, ap);
	va_end(ap);
	alive_fail();
	_exit(EXIT_SETUP);
}

void die_setup_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vsetup_failed_errno(err, fmt, ap);
	va_end(ap);
	alive_fail();
	_exit(EXIT_SETUP);
}

/* -2 until told: then KERN_ALIVE_FD of the environment (alive_remember()). */
static int alive_fd_known = -2;

void alive_write(int fd, char byte)
{
	if (fd >= 0)
		(void)write_all(fd, &byte, 1);
}

void alive_remember(int fd)
{
	alive_fd_known = fd;
}

void alive_fail(void)
{
	alive_write(alive_fd_known != -2 ? alive_fd_known : env_fd("KERN_ALIVE_FD"), ALIVE_FAILED);
}
