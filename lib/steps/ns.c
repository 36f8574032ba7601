/* kern-ns's flags (applets/steps/ns.c has their usage). */
#include <stddef.h>

#include "steps/steps.h"

static const struct flag flags[] = {
	{.name = "--net", .kind = FLAG_SET, .off = offsetof(struct ns_step, net_host)},
	{.name = "--uid-range", .kind = FLAG_SET, .off = offsetof(struct ns_step, range),
	 .val = NS_RANGE_ASKED},
	{.name = "--uid-range-if-available", .kind = FLAG_SET, .off = offsetof(struct ns_step, range),
	 .val = NS_RANGE_IF_AVAILABLE},
	{.name = "--map-host-root", .kind = FLAG_SET, .off = offsetof(struct ns_step, host_root)},
	{.name = "--no-userns", .kind = FLAG_SET, .off = offsetof(struct ns_step, no_userns)},
	{.name = "--egress-fd", .kind = FLAG_INT, .off = offsetof(struct ns_step, egress_fd),
	 .max = 1 << 20},
};

const struct ns_step ns_step_defaults = {.egress_fd = -1};

const struct flag_table ns_step_flags = {
	.step = "kern-ns", .area = "box", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &ns_step_defaults, .size = sizeof(struct ns_step)};

void ns_step_config(const struct ns_step *s, struct ns_config *nc)
{
	nc->net_host = s->net_host;
	nc->range = s->range != NS_RANGE_NO;
	nc->range_explicit = s->range == NS_RANGE_ASKED;
	nc->host_root = s->host_root;
	nc->no_userns = s->no_userns;
}
