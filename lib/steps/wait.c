/* kern-wait's flags (applets/steps/wait.c has their usage). */
#include <stddef.h>

#include "steps/checks.h"
#include "steps/steps.h"

static const struct flag flags[] = {
	{.name = "--name", .kind = FLAG_STR, .off = offsetof(struct wait_step, name), .required = 1,
	 .check = check_box_name},
	{.name = "--runtime", .kind = FLAG_STR, .off = offsetof(struct wait_step, runtime),
	 .required = 1, .check = check_abs},
	CG_LIMIT_FLAGS(struct wait_step, limits),
	{.name = "--timeout", .kind = FLAG_SECONDS, .off = offsetof(struct wait_step, timeout)},
	{.name = "--image", .kind = FLAG_STR, .off = offsetof(struct wait_step, image)},
	{.name = "--lower", .kind = FLAG_STR, .off = offsetof(struct wait_step, lower),
	 .check = check_abs},
	{.name = "--overlay", .kind = FLAG_SET, .off = offsetof(struct wait_step, overlay)},
	{.name = "--label", .kind = FLAG_LIST, .off = offsetof(struct wait_step, labels),
	 .count = offsetof(struct wait_step, nlabels), .max_items = RECORD_MAX_LABELS,
	 .check = check_kv},
	{.name = "--seccomp", .kind = FLAG_STR, .off = offsetof(struct wait_step, seccomp)},
	{.name = "--caps", .kind = FLAG_HEX, .off = offsetof(struct wait_step, caps)},
	{.name = "--user", .kind = FLAG_STR, .off = offsetof(struct wait_step, user)},
	{.name = "--tty", .kind = FLAG_SET, .off = offsetof(struct wait_step, tty)},
	{.name = "--restrict-sxid", .kind = FLAG_SET, .off = offsetof(struct wait_step, restrict_sxid)},
	{.name = "--no-userns", .kind = FLAG_SET, .off = offsetof(struct wait_step, no_userns)},
	{.name = "--workload-is-host-root", .kind = FLAG_SET, .off = offsetof(struct wait_step, host_root)},
};

const struct wait_step wait_step_defaults;

const struct flag_table wait_step_flags = {
	.step = "kern-wait", .area = "box", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &wait_step_defaults, .size = sizeof(struct wait_step)};
