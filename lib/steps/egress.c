/* kern-egress's flags (applets/steps/egress.c has their usage). */
#include <stddef.h>

#include "steps/checks.h"
#include "steps/steps.h"

static const struct flag flags[] = {
	{.name = "--allow", .kind = FLAG_STR, .off = offsetof(struct egress_step, allow)},
	{.name = "--name", .kind = FLAG_STR, .off = offsetof(struct egress_step, name),
	 .check = check_box_name},
	{.name = "--fd", .kind = FLAG_INT, .off = offsetof(struct egress_step, fd), .min = 3,
	 .max = 1 << 20},
	{.name = "--attach", .kind = FLAG_SET, .off = offsetof(struct egress_step, attach)},
};

const struct egress_step egress_step_defaults = {.fd = -1};

const struct flag_table egress_step_flags = {
	.step = "kern-egress", .area = "box", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &egress_step_defaults, .size = sizeof(struct egress_step)};
