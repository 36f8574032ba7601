#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/env.h"
#include "box/report.h"

static void __attribute__((noreturn)) finish(int code, const char *text)
{
	if (diag_status_fd >= 0) {
		status_send(diag_status_fd, code, text);
	} else {
		/* Standalone step: print each line with its own write. */
		const char *p = text;
		while (*p) {
			const char *e = strchrnul(p, '\n');
			diag_line(0, "%.*s", (int)(e - p), p);
			p = *e ? e + 1 : e;
		}
	}
	alive_fail();
	_exit(code);
}

void step_fail(const char *fmt, ...)
{
	char why[3000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	die_setup("%s", why);
}

void exec_fail(const char *cmd, int err)
{
	char text[3100], safe[1024];
	int code = err == EACCES ? EXIT_NOEXEC : EXIT_NOTFOUND;
	snprintf(safe, sizeof safe, "%s", cmd);
	for (char *c = safe; *c; c++)
		if (*c == '\n' || *c == '\'')
			*c = '?';
	const char *hint =
		code == EXIT_NOEXEC ? "the file exists in the box but is not executable (chmod +x, or run it through its interpreter)"
		: err == ENOEXEC    ? "the file is no program this kernel runs: a script without a #! line, or a binary for another machine"
				    : "the command does not exist in the box's root; check the image, --workdir and PATH";
	snprintf(text, sizeof text, "kern: cannot start '%s' in box: %s (os error %d)\nhint: %s", safe,
		 strerror(err), err, hint);
	finish(code, text);
}

void status_forked(void)
{
	if (diag_status_fd >= 0)
		(void)write_all(diag_status_fd, "F", 1);
}

int status_parse(const char *buf, size_t n, char *text, size_t len)
{
	char msg[4096];
	if (n >= sizeof msg)
		n = sizeof msg - 1;
	memcpy(msg, buf, n);
	msg[n] = 0;
	text[0] = 0;
	char *m = msg;
	int forked = *m == 'F';
	if (forked)
		m++;
	if (!*m)
		return forked ? 0 : -1;
	char *sp = strchr(m, ' ');
	if (!sp)
		return -1;
	*sp = 0;
	snprintf(text, len, "%s", sp + 1);
	int code = (int)strtol(m, NULL, 10);
	return code > 0 ? code : -1;
}
