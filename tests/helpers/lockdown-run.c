/* lockdown-run: test-only driver for lib/lockdown/lockdown.c on the host, without a
 * box. Applies the lockdown its options describe with lockdown_apply(),
 * then execs CMD, like the end of kern-seccomp:
 *
 *   lockdown-run [--caps HEX] [--cap-drop C]... [--cap-add C]...
 *                [--user UID:GID[:G,G...]] [--seccomp MODE] [--ulimit N=S[:H]]...
 *                [--apparmor PROFILE] [--for-exec] -- CMD [ARG...]
 *
 * Exit: lockdown_apply's status (125, or 126 with --for-exec) when it
 * refuses, 1 for bad options, 127 if CMD cannot be executed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "lockdown/lockdown.h"

static int usage(const char *why)
{
	fprintf(stderr, "lockdown-run: %s\n", why);
	return 1;
}

static int parse_id(const char *s, char **end, unsigned *out)
{
	errno = 0;
	unsigned long v = strtoul(s, end, 10);
	if (errno || *end == s || v > 0xfffffffeUL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_user(const char *s, struct lockdown *ld)
{
	char *end;
	unsigned v;
	if (parse_id(s, &end, &v) < 0 || *end != ':')
		return -1;
	ld->uid = v;
	if (parse_id(end + 1, &end, &v) < 0)
		return -1;
	ld->gid = v;
	while (*end == ':' || *end == ',') {
		if (ld->ngroups == LOCKDOWN_MAX_GROUPS || parse_id(end + 1, &end, &v) < 0)
			return -1;
		ld->groups[ld->ngroups++] = v;
	}
	ld->user_set = 1;
	return *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct lockdown ld = {.caps = caps_default(), .seccomp_mode = SECCOMP_ALLOWLIST};
	char *drop[64], *add[64];
	int ndrop = 0, nadd = 0, for_exec = 0, i;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--for-exec")) {
			for_exec = 1;
			continue;
		}
		if (!v)
			return usage("option without a value");
		i++;
		if (!strcmp(o, "--caps")) {
			char *end;
			ld.caps = strtoull(v, &end, 16);
			if (*end)
				return usage("--caps takes hex");
		} else if (!strcmp(o, "--cap-drop") && ndrop < 64)
			drop[ndrop++] = argv[i];
		else if (!strcmp(o, "--cap-add") && nadd < 64)
			add[nadd++] = argv[i];
		else if (!strcmp(o, "--user")) {
			if (parse_user(v, &ld) < 0)
				return usage("--user UID:GID[:G,...]");
		} else if (!strcmp(o, "--seccomp")) {
			if ((ld.seccomp_mode = seccomp_mode_parse(v)) < 0)
				return usage("not a seccomp mode");
		} else if (!strcmp(o, "--ulimit")) {
			const char *why;
			if (ld.nulimits == LOCKDOWN_MAX_ULIMITS || ulimit_parse(v, &ld.ulimits[ld.nulimits++], &why) < 0)
				return usage(why);
		} else if (!strcmp(o, "--apparmor"))
			ld.apparmor = v;
		else
			return usage("unknown option");
	}
	if (i + 1 >= argc)
		return usage("no command after --");
	const char *bad;
	if (caps_adjust(&ld.caps, drop, ndrop, add, nadd, &bad) < 0) {
		fprintf(stderr, "lockdown-run: unknown capability '%s'\n", bad);
		return 1;
	}
	int rc = lockdown_apply(&ld, for_exec);
	if (rc != 0)
		return rc;
	execvp(argv[i + 1], argv + i + 1);
	diag_line(0, "kern: cannot start '%s' in box: %s (os error %d)", argv[i + 1], strerror(errno), errno);
	return 127;
}
