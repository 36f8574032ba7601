/* Value checks the step tables share (flags.h .check). */
#ifndef KERN_STEPS_CHECKS_H
#define KERN_STEPS_CHECKS_H

/* A box name (records.h grammar). */
int check_box_name(const char *v, const char **why);
/* An absolute path. */
int check_abs(const char *v, const char **why);
/* KEY=VALUE with a non-empty KEY. */
int check_kv(const char *v, const char **why);
/* A cgroupfs path for --cgroup-path (kern-oci's linux.cgroupsPath). */
int check_cgroup_path(const char *v, const char **why);

/* The cgroup limit flags of kern-cg and kern-wait, for a struct cg_limits
 * at member m of type T. */
#define CG_LIMIT_FLAGS(T, m)                                                                 \
	{.name = "--memory", .alias = "-m", .kind = FLAG_SIZE, .off = offsetof(T, m.memory),    \
	 .given = FLAG_GIVEN(T, m.memory_given), .min = 1},                                      \
	{.name = "--pids-limit", .kind = FLAG_U64, .off = offsetof(T, m.pids),                  \
	 .given = FLAG_GIVEN(T, m.pids_given), .min = 1, .max = 4194304},                        \
	{.name = "--cpus", .kind = FLAG_CPUS, .off = offsetof(T, m.cpu_micro)},                 \
	{.name = "--cpu-shares", .kind = FLAG_U64, .off = offsetof(T, m.cpu_shares), .min = 2,  \
	 .max = 262144},                                                                         \
	{.name = "--cgroup-path", .kind = FLAG_STR, .off = offsetof(T, m.path),                 \
	 .check = check_cgroup_path},                                                            \
	{.name = "--require-limits", .kind = FLAG_SET, .off = offsetof(T, m.require_limits)},   \
	{.name = "--allow-uncapped", .kind = FLAG_SET, .off = offsetof(T, m.allow_uncapped)}

#endif
