/* --ulimit NAME=SOFT[:HARD] (box-cli.md §2.1) and setrlimit in the box
 * (isolation.md §2.7 step 29). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "base/parse.h"
#include "lockdown/steps.h"

static const struct {
	const char *name;
	int resource;
} names[] = {
	{"as", RLIMIT_AS},		{"core", RLIMIT_CORE},
	{"cpu", RLIMIT_CPU},		{"data", RLIMIT_DATA},
	{"fsize", RLIMIT_FSIZE},	{"locks", RLIMIT_LOCKS},
	{"memlock", RLIMIT_MEMLOCK},	{"msgqueue", RLIMIT_MSGQUEUE},
	{"nice", RLIMIT_NICE},		{"nofile", RLIMIT_NOFILE},
	{"nproc", RLIMIT_NPROC},	{"rss", RLIMIT_RSS},
	{"rtprio", RLIMIT_RTPRIO},	{"rttime", RLIMIT_RTTIME},
	{"sigpending", RLIMIT_SIGPENDING},	{"stack", RLIMIT_STACK},
};
#define NNAMES (sizeof names / sizeof names[0])

static const char *resource_name(int resource)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (names[i].resource == resource)
			return names[i].name;
	return "?";
}

/* A decimal integer, or unlimited / infinity / -1 for no limit. */
static int parse_limit(const char *s, size_t len, rlim_t *out)
{
	char buf[32];
	unsigned long long v;
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (!strcmp(buf, "unlimited") || !strcmp(buf, "infinity") || !strcmp(buf, "-1")) {
		*out = RLIM_INFINITY;
		return 0;
	}
	/* RLIM_INFINITY is all ones: a number that large would mean it. */
	if (parse_u64(buf, &v) < 0 || (rlim_t)v >= RLIM_INFINITY)
		return -1;
	*out = (rlim_t)v;
	return 0;
}

int ulimit_parse(const char *spec, struct ulimit_spec *out, const char **why)
{
	const char *eq, *colon, *val;
	size_t i;
	if (!spec || !(eq = strchr(spec, '='))) {
		*why = "expected NAME=SOFT[:HARD]";
		return -1;
	}
	for (i = 0; i < NNAMES; i++)
		if (strlen(names[i].name) == (size_t)(eq - spec) && !strncmp(names[i].name, spec, (size_t)(eq - spec)))
			break;
	if (i == NNAMES) {
		*why = "unknown limit name (as core cpu data fsize locks memlock msgqueue nice nofile nproc rss "
		       "rtprio rttime sigpending stack)";
		return -1;
	}
	val = eq + 1;
	colon = strchr(val, ':');
	if (parse_limit(val, colon ? (size_t)(colon - val) : strlen(val), &out->soft) < 0 ||
	    (colon && parse_limit(colon + 1, strlen(colon + 1), &out->hard) < 0)) {
		*why = "a limit is a non-negative integer, unlimited, infinity or -1";
		return -1;
	}
	if (!colon)
		out->hard = out->soft;
	/* RLIM_INFINITY is the largest value, so one comparison covers it. */
	if (out->soft > out->hard) {
		*why = "the soft limit is above the hard limit";
		return -1;
	}
	out->resource = names[i].resource;
	return 0;
}

static void fmt_limit(char *buf, size_t n, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, n, "unlimited");
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

int ulimits_apply(const struct ulimit_spec *u, int n, char *why)
{
	for (int i = 0; i < n; i++) {
		struct rlimit rl = {.rlim_cur = u[i].soft, .rlim_max = u[i].hard};
		if (setrlimit(u[i].resource, &rl) < 0) {
			char s[24], h[24];
			fmt_limit(s, sizeof s, u[i].soft);
			fmt_limit(h, sizeof h, u[i].hard);
			snprintf(why, WHY_MAX, "setrlimit(%s, %s:%s): %s", resource_name(u[i].resource), s, h,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}
