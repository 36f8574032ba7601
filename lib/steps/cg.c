/* kern-cg's flags (applets/steps/cg.c has their usage). */
#include <stddef.h>
#include <string.h>

#include "steps/checks.h"
#include "steps/steps.h"

/* 0-1,3: digits, commas and ranges, at most 200 bytes. */
static int cpulist_check(const char *s, const char **why)
{
	int digits = 0;
	*why = "expected a cpu list such as 0-1,3";
	if (!*s || strlen(s) > 200)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if ((*p == ',' || *p == '-') && digits)
			digits = 0;
		else
			return -1;
	}
	return digits > 0 ? 0 : -1;
}

static const struct flag flags[] = {
	{.name = "--name", .kind = FLAG_STR, .off = offsetof(struct cg_step, name), .required = 1},
	CG_LIMIT_FLAGS(struct cg_step, limits),
	{.name = "--cpuset", .kind = FLAG_STR, .off = offsetof(struct cg_step, limits.cpuset),
	 .check = cpulist_check},
};

const struct cg_step cg_step_defaults;

const struct flag_table cg_step_flags = {
	.step = "kern-cg", .area = "box", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &cg_step_defaults, .size = sizeof(struct cg_step)};
