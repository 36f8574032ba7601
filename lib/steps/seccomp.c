/* kern-seccomp's flags (applets/steps/seccomp.c has their usage). */
#include <stddef.h>

#include "steps/checks.h"
#include "steps/steps.h"

static const char *const modes[] = {"allowlist", "denylist", "allowlist-audit", NULL};

static int ulimit_check(const char *v, const char **why)
{
	struct ulimit_spec u;
	return ulimit_parse(v, &u, why);
}

#define SC(f) offsetof(struct seccomp_step, f)
static const struct flag flags[] = {
	{.name = "--env", .kind = FLAG_LIST, .off = SC(env), .count = SC(nenv),
	 .max_items = SECCOMP_STEP_MAX_ENV, .tags = FLAG_GIVEN(struct seccomp_step, env_tag),
	 .tag = SECCOMP_ENV_KV, .check = check_kv},
	{.name = "--env-file", .kind = FLAG_LIST, .off = SC(env), .count = SC(nenv),
	 .max_items = SECCOMP_STEP_MAX_ENV, .tags = FLAG_GIVEN(struct seccomp_step, env_tag),
	 .tag = SECCOMP_ENV_FILE},
	{.name = "--caps", .kind = FLAG_HEX, .off = SC(caps), .given = FLAG_GIVEN(struct seccomp_step, caps_given)},
	{.name = "--restrict-sxid", .kind = FLAG_SET, .off = SC(restrict_sxid)},
	{.name = "--workload-is-host-root", .kind = FLAG_SET, .off = SC(host_root)},
	{.name = "--user", .kind = FLAG_STR, .off = SC(user)},
	{.name = "--seccomp", .kind = FLAG_WORD, .off = SC(seccomp_mode), .words = modes,
	 .given = FLAG_GIVEN(struct seccomp_step, seccomp_given)},
	{.name = "--ulimit", .kind = FLAG_LIST, .off = SC(ulimits), .count = SC(nulimits),
	 .max_items = LOCKDOWN_MAX_ULIMITS, .check = ulimit_check},
	{.name = "--apparmor", .kind = FLAG_STR, .off = SC(apparmor)},
	{.name = "--seccomp-bpf", .kind = FLAG_STR, .off = SC(bpf), .check = check_abs},
	{.name = "--tty", .kind = FLAG_SET, .off = SC(tty)},
};

const struct seccomp_step seccomp_step_defaults = {.seccomp_mode = SECCOMP_ALLOWLIST};

const struct flag_table seccomp_step_flags = {
	.step = "kern-seccomp", .area = "box", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &seccomp_step_defaults, .size = sizeof(struct seccomp_step)};
