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

void fatal(const char *area, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;
	snprintf(prefix, sizeof prefix, "error: %s: ", area);
	va_start(ap, fmt);
	diag_vline(0, prefix, fmt, ap);
	va_end(ap);
}

void hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vline(0, "hint: ", fmt, ap);
	va_end(ap);
}

void setup_failed(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (diag_status_fd >= 0) {
		char line[3200];
		int n = snprintf(line, sizeof line, "125 kern: sandbox setup failed: ");
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
		for (char *c = line; *c; c++)
			if (*c == '\n')
				*c = ' ';
		(void)write_all(diag_status_fd, line, strlen(line));
	} else {
		diag_vline(0, "kern: sandbox setup failed: ", fmt, ap);
	}
	va_end(ap);
}
