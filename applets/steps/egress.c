/* kern-egress: start the allowlist HTTP(S) proxy for the box */
#include "base/applet.h"

static const char usage[] =
"usage: kern-egress --allow D1,D2,... [--name NAME] [--fd N] -- NEXT...\n"
"       kern-egress --attach [--fd N] -- NEXT...\n"
"\n"
"Step 8 of a box (host namespaces): fork the egress proxy that lets the box\n"
"reach the listed domains, and their subdomains, over HTTP and HTTPS and\n"
"nothing else, then execute NEXT with the proxy's control descriptor open\n"
"(at N when given) and its number in KERN_EGRESS_FD.\n"
"\n"
"With --attach, in the box's new network namespace: listen on\n"
"127.0.0.1:3128, hand the listener to the proxy, export the proxy's pid in\n"
"KERN_EGRESS_PID and execute NEXT.\n"
"\n"
"  --allow D1,D2,...  comma-separated domains (LDH labels, at least one dot)\n"
"  --name NAME        charge the proxy to the cgroup kern-cg made for box NAME\n"
"  --fd N             the control descriptor's number (N > 2)\n";

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/env.h"
#include "base/selfexec.h"
#include "cgroup/cgroup.h"
#include "egress/egress.h"
#include "steps/steps.h"

__attribute__((noreturn)) static void usage_error(const char *fmt, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof msg, fmt, arg);
	step_fatal(&egress_step_flags, "%s", msg);
	die_hint("run 'kern-egress --help' for usage");
}

static int run_next(char **next)
{
	exec_next(next);
	int e = errno;
	step_fatal(&egress_step_flags, "cannot run '%s': %s", next[0], strerror(e));
	return e == EACCES ? EXIT_NOEXEC : EXIT_NOTFOUND;
}

/* Splits a copy of the comma list (argv stays intact for ps); every
 * entry must pass the grammar. */
static int split_allow(const char *arg, char ***out, int *n)
{
	int cap = 1;
	char *list = strdup(arg);
	if (!list)
		return -1;
	for (const char *p = list; *p; p++)
		cap += *p == ',';
	char **v = calloc((size_t)cap + 1, sizeof *v);
	if (!v) {
		free(list);
		return -1;
	}
	*n = 0;
	for (char *item = list, *comma; item; item = comma) {
		comma = strchr(item, ',');
		if (comma)
			*comma++ = 0;
		if (!egress_domain_valid(item))
			usage_error("invalid --egress-allow domain '%s' (LDH labels of 1-63 characters, at least one dot, not an IP address)", item);
		v[(*n)++] = item;
	}
	*out = v;
	return 0;
}

static int place_fd(int fd, int want)
{
	if (want >= 0 && want != fd) {
		if (dup2(fd, want) < 0)
			return -1;
		close(fd);
		fd = want;
	}
	int flags = fcntl(fd, F_GETFD);
	if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
		return -1;
	return fd;
}

static int egress_main(int argc, char **argv)
{
	struct egress_step c = egress_step_defaults;
	int i = step_args(&egress_step_flags, argc, argv, &c);

	if (i + 1 >= argc)
		usage_error("%s", "missing '-- NEXT...'");
	char **next = argv + i + 1;
	if (c.attach == !!c.allow)
		usage_error("%s", "exactly one of --allow and --attach is needed");
	int fd = c.fd;

	if (c.attach) {
		int ctl = fd >= 0 ? fd : env_fd(EGRESS_FD_ENV);
		unsetenv(EGRESS_PID_ENV);
		/* No descriptor: the start already failed and warned; the box
		 * simply has no route. Otherwise the descriptor stays open for
		 * NEXT: it is the proxy's lifeline (egress_stop() closes it). */
		if (ctl >= 0 && egress_attach(ctl) == 0) {
			char num[24];
			snprintf(num, sizeof num, "%d", ctl);
			setenv(EGRESS_FD_ENV, num, 1);
		} else {
			unsetenv(EGRESS_FD_ENV);
		}
		return run_next(next);
	}

	struct egress_config cfg = {.cg = NULL};
	char **list = NULL;
	if (split_allow(c.allow, &list, &cfg.nallow) != 0)
		step_die(&egress_step_flags, "out of memory");
	cfg.allow = list;
	if (c.name && cg_open(c.name, getpid(), NULL, &cfg.cg) != 0)
		return EXIT_SETUP;
	int ctl;
	unsetenv(EGRESS_FD_ENV);
	if (egress_start(&cfg, &ctl) == 0) {
		int placed = place_fd(ctl, fd);
		if (placed < 0)
			step_die_setup_errno(&egress_step_flags, "cannot place the control descriptor at %d", fd);
		char num[24];
		snprintf(num, sizeof num, "%d", placed);
		setenv(EGRESS_FD_ENV, num, 1);
	}
	if (cfg.cg)
		cg_close(cfg.cg);
	return run_next(next);
}

APPLET(egress, "start the allowlist HTTP(S) proxy for the box", usage, egress_main);
