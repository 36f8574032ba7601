/* kern-fs's flags (applets/steps/fs.c has their usage): struct fs_config. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "box/mountspec.h"
#include "box/profiles.h"
#include "box/vdisk.h"
#include "steps/steps.h"

_Static_assert(sizeof(enum root_kind) == sizeof(int), "--root is stored as an int");

static const char *const roots[] = {"overlay", "bind", "host", NULL};

static int bind_parse(const char *v, void *item, const char **why)
{
	struct bind_spec *b = item;
	return parse_mount(v, b, why) < 0 || bind_check(b, why) < 0 ? -1 : 0;
}

static int bind_format(const void *item, char *buf, size_t len)
{
	return format_mount(item, buf, len);
}

static int tmpfs_parse(const char *v, void *item, const char **why)
{
	return parse_tmpfs(v, item, why);
}

static int tmpfs_format(const void *item, char *buf, size_t len)
{
	const struct tmpfs_spec *t = item;
	char mode[16] = "";
	if (t->mode)
		snprintf(mode, sizeof mode, ",mode=%o", t->mode);
	int n = snprintf(buf, len, "%s:%" PRIu64 "%s%s%s", t->path, t->size, mode, t->noexec ? ",noexec" : "",
			 t->strictatime ? ",strictatime" : "");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A disk vdisk: PATH:SIZE as --tmpfs, with a size mke2fs and ext4 take. */
static int vdisk_parse(const char *v, void *item, const char **why)
{
	const struct tmpfs_spec *t = item;
	if (parse_tmpfs(v, item, why) < 0)
		return -1;
	if (t->mode || t->noexec || t->strictatime) {
		*why = "a vdisk takes PATH:SIZE only";
		return -1;
	}
	if (t->size < VDISK_MIN || t->size > VDISK_MAX) {
		*why = "SIZE must be from 1m to 16t";
		return -1;
	}
	return 0;
}

static int device_parse(const char *v, void *item, const char **why)
{
	struct dev_spec *d = item;
	if (v[0] != '/') {
		*why = "not an absolute path";
		return -1;
	}
	d->path = (char *)v;
	return 0;
}

static int device_format(const void *item, char *buf, size_t len)
{
	const struct dev_spec *d = item;
	int n = snprintf(buf, len, "%s", d->path);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

#define FS(f) offsetof(struct fs_config, f)
static const struct flag flags[] = {
	{.name = "--root", .kind = FLAG_WORD, .off = FS(root), .words = roots, .required = 1},
	{.name = "--lower", .kind = FLAG_STR, .off = FS(lower)},
	{.name = "--scratch", .kind = FLAG_STR, .off = FS(scratch)},
	{.name = "--hostname", .kind = FLAG_STR, .off = FS(hostname), .required = 1},
	{.name = "--disk", .kind = FLAG_SIZE, .off = FS(disk)},
	{.name = "--ro", .kind = FLAG_SET, .off = FS(read_only)},
	{.name = "--rootless", .kind = FLAG_SET, .off = FS(rootless)},
	{.name = "--net-host", .kind = FLAG_SET, .off = FS(net_host)},
	{.name = "--tty", .kind = FLAG_SET, .off = FS(tty)},
	{.name = "--cgroup2", .kind = FLAG_SET, .off = FS(cgroup2)},
	{.name = "--sysfs", .kind = FLAG_SET, .off = FS(sysfs)},
	{.name = "--workdir", .kind = FLAG_STR, .off = FS(workdir)},
	{.name = "--mount", .kind = FLAG_LIST, .off = FS(binds), .count = FS(nbinds), .indirect = 1,
	 .max_items = FS_STEP_MAX_ITEMS, .elem = sizeof(struct bind_spec), .parse = bind_parse,
	 .format = bind_format},
	{.name = "--tmpfs", .kind = FLAG_LIST, .off = FS(tmpfs), .count = FS(ntmpfs), .indirect = 1,
	 .max_items = FS_STEP_MAX_ITEMS, .elem = sizeof(struct tmpfs_spec), .parse = tmpfs_parse,
	 .format = tmpfs_format},
	{.name = "--vdisk", .kind = FLAG_LIST, .off = FS(vdisks), .count = FS(nvdisks), .indirect = 1,
	 .max_items = PROFILES_MAX_VDISKS, .elem = sizeof(struct tmpfs_spec), .parse = vdisk_parse,
	 .format = tmpfs_format},
	{.name = "--device", .kind = FLAG_LIST, .off = FS(devices), .count = FS(ndevices),
	 .indirect = 1, .max_items = FS_STEP_MAX_ITEMS, .elem = sizeof(struct dev_spec),
	 .parse = device_parse, .format = device_format},
};

/* kern-fs run by hand assumes kern box's default memory cap. */
const struct fs_config fs_step_defaults = {.disk = KERN_MEMORY_DEFAULT / 2, .idm_fd = -1};

const struct flag_table fs_step_flags = {
	.step = "kern-fs", .area = "box", .flags = flags, .nflags = sizeof flags / sizeof flags[0],
	.defaults = &fs_step_defaults, .size = sizeof(struct fs_config)};
