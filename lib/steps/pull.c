/* kern-pull's flags (applets/steps/pull.c has their usage). */
#include <stddef.h>

#include "image/image.h"
#include "steps/steps.h"

static const char *const policies[] = {"missing", "never", "always", NULL};
_Static_assert(PULL_MISSING == 0 && PULL_NEVER == 1 && PULL_ALWAYS == 2, "--pull words in order");

static const struct flag flags[] = {
	{.name = "--platform", .kind = FLAG_STR, .off = offsetof(struct pull_step, platform)},
	{.name = "--pull", .kind = FLAG_WORD, .off = offsetof(struct pull_step, policy),
	 .words = policies},
	{.name = "--quiet", .alias = "-q", .kind = FLAG_SET, .off = offsetof(struct pull_step, quiet)},
};

const struct pull_step pull_step_defaults = {.policy = PULL_MISSING};

const struct flag_table pull_step_flags = {
	.step = "kern-pull", .area = "pull", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &pull_step_defaults, .size = sizeof(struct pull_step), .npos = 1,
	.pos = {offsetof(struct pull_step, ref)}};
