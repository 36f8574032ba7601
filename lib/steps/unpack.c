/* kern-unpack's flags (applets/steps/unpack.c has their usage). */
#include <stddef.h>

#include "steps/steps.h"

static const struct flag flags[] = {
	{.name = "--diff-id", .kind = FLAG_STR, .off = offsetof(struct unpack_step, diff_id)},
	{.name = "--digest", .kind = FLAG_STR, .off = offsetof(struct unpack_step, digest)},
};

const struct unpack_step unpack_step_defaults;

const struct flag_table unpack_step_flags = {
	.step = "kern-unpack", .area = "image", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &unpack_step_defaults, .size = sizeof(struct unpack_step), .npos = 2,
	.pos = {offsetof(struct unpack_step, layer), offsetof(struct unpack_step, dir)}};
