/* config.json -> kern box flags (map.h). Checked here: what needs the
 * bundle (the root's real path), what a kern box flag cannot carry (a
 * comma in a bind source), and what kern cannot honour. Everything else
 * (clean paths, sizes, names) kern box checks again as for any user. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/path.h"
#include "box/ns.h"
#include "box/rootfs.h"
#include "lockdown/lockdown.h"
#include "ociruntime/map.h"
#include "ociruntime/sysctl.h"
#include "steps/checks.h"

struct m {
	struct strv *argv;
	char *why;
	size_t wl;
	int oom;
	const struct oci_config *c;
	int sysfs;	/* the config mounts sysfs at /sys */
};

static int fail(struct m *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct m *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->why, m->wl, fmt, ap);
	va_end(ap);
	return -1;
}

static void put(struct m *m, const char *a)
{
	if (strv_push(m->argv, a) < 0)
		m->oom = 1;
}

static void put2(struct m *m, const char *flag, const char *v)
{
	put(m, flag);
	put(m, v);
}

int oci_root_path(const struct oci_config *c, const char *bundle, char *out, size_t len, char *why,
		  size_t wl)
{
	char joined[PATH_MAX * 2];
	struct stat st;
	if (!*c->root) {
		snprintf(why, wl, "root.path is empty");
		return -1;
	}
	snprintf(joined, sizeof joined, "%s%s%s", c->root[0] == '/' ? "" : bundle,
		 c->root[0] == '/' ? "" : "/", c->root);
	char *real = realpath(joined, NULL);
	if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, wl, "root.path %s: %s", joined, real ? "not a directory" : strerror(errno));
		free(real);
		return -1;
	}
	if (!strcmp(real, "/") || strlen(real) >= len) {
		snprintf(why, wl, "root.path %s resolves to %s: refused (a box of the host's own root, or "
			 "a path longer than PATH_MAX)", c->root, real);
		free(real);
		return -1;
	}
	snprintf(out, len, "%s", real);
	free(real);
	return 0;
}

static int has_ns(const struct oci_config *c, const char *t)
{
	for (int i = 0; i < c->nns; i++)
		if (!strcmp(c->ns[i], t))
			return 1;
	return 0;
}

/* kern gives every box its own pid, mount, ipc and uts namespace (and a
 * user namespace where it can); network is the one a config may share. */
static int map_namespaces(struct m *m, const struct oci_config *c)
{
	static const char *const known[] = {"pid", "mount", "ipc", "uts", "network", "user", "cgroup", NULL};
	static const char *const always[] = {"pid", "mount", "ipc", "uts", NULL};
	for (int i = 0; i < c->nns; i++) {
		int ok = 0;
		for (int k = 0; known[k] && !ok; k++)
			ok = !strcmp(known[k], c->ns[i]);
		if (!ok)
			return fail(m, "linux.namespaces[%d].type: '%s' is not supported", i, c->ns[i]);
		for (int k = 0; k < i; k++)
			if (!strcmp(c->ns[k], c->ns[i]))
				return fail(m, "linux.namespaces[%d].type: '%s' is listed twice", i, c->ns[i]);
	}
	/* A path joins an existing namespace: the network, IPC and UTS ones
	 * (a pod's shared ones, an engine's prepared network namespace),
	 * which kern box --netns/--ipcns/--utsns opens and checks (nsfs, its
	 * type) before setns(2). */
	static const char *const joinable[][2] = {{"network", "--netns"}, {"ipc", "--ipcns"}, {"uts", "--utsns"}};
	for (int i = 0; i < c->nns; i++) {
		const char *flag = NULL;
		if (!c->ns_path[i] || !*c->ns_path[i])
			continue;
		for (size_t k = 0; k < sizeof joinable / sizeof joinable[0]; k++)
			if (!strcmp(c->ns[i], joinable[k][0]))
				flag = joinable[k][1];
		if (!flag)
			return fail(m, "linux.namespaces[%d].path: joining a '%s' namespace is not supported (kern "
				    "joins network, IPC and UTS namespaces only; a box has its own %s namespace)", i,
				    c->ns[i], c->ns[i]);
		if (c->ns_path[i][0] != '/' || strpbrk(c->ns_path[i], "\n"))
			return fail(m, "linux.namespaces[%d].path '%s' must be an absolute path", i, c->ns_path[i]);
		if (!strcmp(c->ns[i], "uts") && c->hostname && *c->hostname)
			return fail(m, "hostname with a joined uts namespace (linux.namespaces[%d].path) is not "
				    "supported: the namespace keeps its own name", i);
		put2(m, flag, c->ns_path[i]);
	}
	for (int k = 0; always[k]; k++)
		if (!has_ns(c, always[k]))
			return fail(m, "linux.namespaces: no '%s' entry: a box always has its own %s "
				    "namespace (sharing the host's is not supported)", always[k], always[k]);
	if (!has_ns(c, "network"))
		put(m, "--net=host");
	return 0;
}

/* The id maps kern makes for a user's box, and only those: box root is
 * the caller (`0 UID 1`, --no-uid-range), and with a subordinate range
 * ids 1.. are that range (`1 START COUNT`, --uid-range), as rootless
 * engines write them. Root's boxes map kern's own subordinate ids. */
static int map_idmaps(struct m *m, const struct oci_config *c)
{
	const struct oci_idmap *maps[2] = {c->uidmap, c->gidmap};
	const int n[2] = {c->nuidmap, c->ngidmap};
	const char *field[2] = {"linux.uidMappings", "linux.gidMappings"};
	const char *file[2] = {"/etc/subuid", "/etc/subgid"};
	const unsigned long self[2] = {(unsigned long)geteuid(), (unsigned long)getegid()};
	if (!n[0] && !n[1])
		return 0;
	if (geteuid() == 0)
		return fail(m, "linux.uidMappings: root's boxes map kern's own subordinate ids; a config's "
			    "mappings are not supported for root yet");
	if (!has_ns(c, "user"))
		return fail(m, "linux.uidMappings need a 'user' entry in linux.namespaces");
	if (n[0] != n[1])
		return fail(m, "linux.uidMappings and linux.gidMappings must both be one map or both two");
	struct passwd *pw = getpwuid(geteuid());
	for (int k = 0; k < 2; k++) {
		unsigned long start = 0, count = 0;
		if (n[k] > 2 || maps[k][0].container != 0 || maps[k][0].host != self[k] || maps[k][0].size != 1)
			return fail(m, "%s: only kern's own maps are supported: {0, %lu, 1}, then optionally "
				    "{1, START, COUNT} of your %s range", field[k], self[k], file[k]);
		if (n[k] == 2 && (subid_range(file[k], (uid_t)self[k], pw ? pw->pw_name : NULL, &start, &count) < 0 ||
				  maps[k][1].container != 1 || maps[k][1].host != start || maps[k][1].size != count))
			return fail(m, "%s[1]: only {1, %lu, %lu}, your %s range, is supported", field[k], start,
				    count, file[k]);
	}
	/* kern box falls back to a single map, with a warning -q silences,
	 * when the range cannot be had: refused here instead. */
	if (n[0] == 2 && !ns_range_available(geteuid(), 0))
		return fail(m, "linux.uidMappings[1]: no newuidmap/newgidmap to map your subordinate range");
	put(m, n[0] == 2 ? "--uid-range" : "--no-uid-range");
	return 0;
}

static int opt_in(const char *o, const char *const *allowed)
{
	for (int i = 0; allowed[i]; i++) {
		size_t n = strlen(allowed[i]);
		if (allowed[i][n - 1] == '=' ? !strncmp(o, allowed[i], n) : !strcmp(o, allowed[i]))
			return 1;
	}
	return 0;
}

/* The mounts every box has already, made by kern with its own options
 * (isolation.md §4): a config's entry for one of them is that mount. */
static int kern_provides(const struct oci_mount *mt)
{
	static const char *const own[][2] = {{"/proc", "proc"},		{"/dev", "tmpfs"},
					     {"/dev/pts", "devpts"},	{"/dev/shm", "tmpfs"},
					     {"/dev/mqueue", "mqueue"}, {"/sys/fs/cgroup", "cgroup"},
					     {"/sys/fs/cgroup", "cgroup2"}};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (mt->type && !strcmp(mt->dst, own[i][0]) && !strcmp(mt->type, own[i][1]))
			return 1;
	return 0;
}

static int map_mount(struct m *m, const struct oci_mount *mt, int k)
{
	static const char *const bind_opts[] = {"bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec",
						"private", "rprivate", NULL};
	static const char *const tmpfs_opts[] = {"rw", "nosuid", "nodev", "noexec", "strictatime", "size=",
						 "mode=", NULL};
	char buf[PATH_MAX * 2 + 64];
	int bind = 0, ro = 0, noexec = 0;
	uint64_t size = 0;

	if (!path_is_clean_abs(mt->dst))
		return fail(m, "mounts[%d].destination '%s' must be an absolute path without '.' or '..'", k,
			    mt->dst);
	if (!strcmp(mt->dst, "/"))
		return fail(m, "mounts[%d].destination: a mount over the root is not supported", k);
	for (int i = 0; i < mt->nopts; i++)
		bind |= !strcmp(mt->opts[i], "bind") || !strcmp(mt->opts[i], "rbind");
	if (!bind && kern_provides(mt))
		return 0;
	if (bind || (mt->type && !strcmp(mt->type, "bind"))) {
		for (int i = 0; i < mt->nopts; i++) {
			if (!opt_in(mt->opts[i], bind_opts))
				return fail(m, "mounts[%d].options: '%s' is not supported on a bind mount", k,
					    mt->opts[i]);
			ro |= !strcmp(mt->opts[i], "ro");
			noexec |= !strcmp(mt->opts[i], "noexec");
		}
		if (!mt->src || mt->src[0] != '/')
			return fail(m, "mounts[%d].source must be an absolute host path", k);
		if (strpbrk(mt->src, ",\n") || strpbrk(mt->dst, ",\n"))
			return fail(m, "mounts[%d]: a path holding ',' or a newline is not supported", k);
		snprintf(buf, sizeof buf, "type=bind,src=%s,dst=%s%s%s", mt->src, mt->dst, ro ? ",ro" : "",
			 noexec ? ",noexec" : "");
		put2(m, "--mount", buf);
		return 0;
	}
	if (mt->type && !strcmp(mt->type, "tmpfs")) {
		size_t o;
		for (int i = 0; i < mt->nopts; i++) {
			char *end;
			if (!strncmp(mt->opts[i], "mode=", 5) &&
			    (!mt->opts[i][5] || strtoul(mt->opts[i] + 5, &end, 8) > 07777 || *end))
				return fail(m, "mounts[%d].options: bad '%s' (an octal mode up to 7777)", k, mt->opts[i]);
			if (!opt_in(mt->opts[i], tmpfs_opts))
				return fail(m, "mounts[%d].options: '%s' is not supported on a tmpfs (kern's take rw, "
					    "nosuid, nodev, noexec, strictatime, size=, mode=)", k, mt->opts[i]);
			if (!strncmp(mt->opts[i], "size=", 5) && parse_size(mt->opts[i] + 5, 1, &size) < 0)
				return fail(m, "mounts[%d].options: bad '%s'", k, mt->opts[i]);
		}
		if (strchr(mt->dst, ':') || strchr(mt->dst, ','))
			return fail(m, "mounts[%d].destination: a tmpfs path holding ':' or ',' is not supported", k);
		o = (size_t)snprintf(buf, sizeof buf, "%s:%llu", mt->dst, (unsigned long long)size);
		/* mode=, noexec and strictatime as given, checked again by kern
		 * box's --tmpfs; nosuid, nodev and rw are what its tmpfs is. */
		for (int i = 0; i < mt->nopts && o < sizeof buf; i++)
			if (!strncmp(mt->opts[i], "mode=", 5) || !strcmp(mt->opts[i], "noexec") ||
			    !strcmp(mt->opts[i], "strictatime"))
				o += (size_t)snprintf(buf + o, sizeof buf - o, ",%s", mt->opts[i]);
		if (o >= sizeof buf)
			return fail(m, "mounts[%d].options are too long", k);
		put2(m, "--tmpfs", buf);
		return 0;
	}
	if (mt->type && !strcmp(mt->type, "sysfs") && !strcmp(mt->dst, "/sys")) {
		static const char *const sys_opts[] = {"ro", "nosuid", "nodev", "noexec", NULL};
		for (int i = 0; i < mt->nopts; i++)
			if (!opt_in(mt->opts[i], sys_opts))
				return fail(m, "mounts[%d].options: '%s' is not supported on sysfs (kern's is ro, "
					    "nosuid, nodev, noexec)", k, mt->opts[i]);
		if (!has_ns(m->c, "network"))
			return fail(m, "mounts[%d]: a sysfs needs a 'network' entry in linux.namespaces (kern's "
				    "sysfs is the box's own network namespace's)", k);
		put(m, "--sysfs");
		m->sysfs = 1;
		return 0;
	}
	return fail(m, "mounts[%d]: type '%s' at %s is not supported%s", k, mt->type ? mt->type : "(none)",
		    mt->dst, mt->type && !strcmp(mt->type, "sysfs") ? " (kern mounts sysfs at /sys only)" : "");
}

static int listed(const char *const *names, const char *proc_rel)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], proc_rel))
			return 1;
	return 0;
}

/* A /proc entry this kernel does not have: the box's procfs is a new
 * instance of the same kernel's, so it lacks the entry too, and a mask
 * of it is what runc makes of it, nothing (/proc/timer_stats, gone since
 * Linux 4.11; /proc/asound without sound). Entries of a process
 * (numbers, self, thread-self) differ between the two and are never
 * taken as absent. The host's /proc is checked with lstat: an entry
 * someone masked on the host exists and is refused as before. */
static int proc_absent(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	if (!*rel || (*rel >= '0' && *rel <= '9') || !strncmp(rel, "self", 4) || !strncmp(rel, "thread-self", 11))
		return 0;
	snprintf(path, sizeof path, "/proc/%s", rel);
	return lstat(path, &st) < 0 && errno == ENOENT;
}

/* A /sys entry kern's sysfs masks (rootfs_sys_empty, or below one), or
 * one this kernel's sysfs does not have (/sys/fs/selinux without
 * SELinux): the box's sysfs is the same kernel's. */
static int sys_masked(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	for (int i = 0; rootfs_sys_empty[i]; i++) {
		size_t n = strlen(rootfs_sys_empty[i]);
		if (!strncmp(rel, rootfs_sys_empty[i], n) && (rel[n] == 0 || rel[n] == '/'))
			return 1;
	}
	snprintf(path, sizeof path, "/sys/%s", rel);
	return lstat(path, &st) < 0 && errno == ENOENT;
}

/* maskedPaths and readonlyPaths are accepted where kern's own masks
 * (rootfs.h) already do as much, where this kernel has no such entry
 * (proc_absent, sys_masked), and below /sys: without a sysfs mount a box
 * has no /sys but its cgroup view, and kern's sysfs is read-only whole. */
static int map_paths(struct m *m, const struct oci_config *c)
{
	for (int i = 0; i < c->nmasked + c->nreadonly; i++) {
		int masked = i < c->nmasked;
		const char *p = masked ? c->masked[i] : c->readonly[i - c->nmasked];
		const char *field = masked ? "linux.maskedPaths" : "linux.readonlyPaths";
		int idx = masked ? i : i - c->nmasked;
		if (!path_is_clean_abs(p))
			return fail(m, "%s[%d] '%s' must be an absolute path without '.' or '..'", field, idx, p);
		if (!strncmp(p, "/sys/", 5) && strncmp(p, "/sys/fs/cgroup", 14) != 0) {
			if (!m->sysfs || !masked || sys_masked(p + 5))
				continue;
			return fail(m, "%s[%d] '%s' is not supported: kern's sysfs masks /sys/{%s} and is "
				    "read-only whole", field, idx, p,
				    "firmware,devices/virtual/powercap,dev/block,fs/selinux,kernel/security,"
				    "kernel/debug,kernel/tracing");
		}
		const char *rel = !strncmp(p, "/proc/", 6) ? p + 6 : NULL;
		int ok = rel && (listed(rootfs_proc_null, rel) || listed(rootfs_proc_empty, rel) ||
				 (!masked && listed(rootfs_proc_ro, rel)) || proc_absent(rel));
		if (!ok)
			return fail(m, "%s[%d] '%s' is not supported: kern masks /proc/{%s} and makes /proc/{%s} "
				    "read-only, and no other path this kernel has", field, idx, p,
				    "kcore,kallsyms,kmsg,keys,latency_stats,timer_list,sched_debug,scsi,acpi",
				    "sys,sysrq-trigger,irq,bus,fs,asound");
	}
	return 0;
}

static int cap_in(const char *const *set, int n, const char *cap)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(set[i], cap))
			return 1;
	return 0;
}

/* kern's workload has one capability set: the bounding set, which the
 * other four must lie within. */
static int map_caps(struct m *m, const struct oci_config *c)
{
	static const char *const names[] = {"bounding", "effective", "permitted", "inheritable", "ambient"};
	if (!c->caps_set)
		return 0;
	for (int s = 1; s < OCI_CAP_SETS; s++)
		for (int i = 0; i < c->ncaps[s]; i++)
			if (!cap_in(c->caps[OCI_CAP_BOUNDING], c->ncaps[OCI_CAP_BOUNDING], c->caps[s][i]))
				return fail(m, "process.capabilities.%s[%d] %s is not in the bounding set (kern "
					    "gives the workload one set)", names[s], i, c->caps[s][i]);
	put2(m, "--cap-drop", "ALL");
	for (int i = 0; i < c->ncaps[OCI_CAP_BOUNDING]; i++) {
		if (parse_cap(c->caps[OCI_CAP_BOUNDING][i]) < 0)
			return fail(m, "process.capabilities.bounding[%d]: unknown capability '%s'", i,
				    c->caps[OCI_CAP_BOUNDING][i]);
		put2(m, "--cap-add", c->caps[OCI_CAP_BOUNDING][i]);
	}
	return 0;
}

static int map_rlimits(struct m *m, const struct oci_config *c)
{
	for (int i = 0; i < c->nrlimits; i++) {
		const struct oci_rlimit *r = &c->rlimits[i];
		char spec[96], soft[24], hard[24], name[32];
		struct ulimit_spec u;
		const char *why;
		if (strncmp(r->type, "RLIMIT_", 7) != 0 || strlen(r->type) > 7 + 20)
			return fail(m, "process.rlimits[%d].type '%s' is not an RLIMIT_ name", i, r->type);
		size_t k = 0;
		for (const char *s = r->type + 7; *s; s++)
			name[k++] = (char)tolower((unsigned char)*s);
		name[k] = 0;
		snprintf(soft, sizeof soft, r->soft == UINT64_MAX ? "unlimited" : "%llu", (unsigned long long)r->soft);
		snprintf(hard, sizeof hard, r->hard == UINT64_MAX ? "unlimited" : "%llu", (unsigned long long)r->hard);
		snprintf(spec, sizeof spec, "%s=%s:%s", name, soft, hard);
		if (ulimit_parse(spec, &u, &why) < 0)
			return fail(m, "process.rlimits[%d]: %s: %s", i, r->type, why);
		put2(m, "--ulimit", spec);
	}
	return 0;
}

/* linux.cgroupsPath, cgroupfs form only: the box cgroup is that path
 * below each hierarchy's root, as runc makes it (kern box --cgroup-path,
 * root only). */
static int map_cgroups_path(struct m *m, const struct oci_config *c)
{
	const char *why;
	if (!c->cgroups_path)
		return 0;
	if (strchr(c->cgroups_path, ':'))
		return fail(m, "linux.cgroupsPath '%s' is the systemd form (slice:prefix:name), which is not "
			    "supported: kern-oci places cgroupfs paths; configure the engine's cgroup manager "
			    "as cgroupfs", c->cgroups_path);
	if (check_cgroup_path(c->cgroups_path, &why) < 0)
		return fail(m, "linux.cgroupsPath '%s': %s", c->cgroups_path, why);
	if (geteuid() != 0)
		return fail(m, "linux.cgroupsPath is not supported for a user: kern places a user's box "
			    "cgroups itself (leave it out, as rootless engines on cgroup v1 do)");
	put2(m, "--cgroup-path", c->cgroups_path);
	return 0;
}

static int map_resources(struct m *m, const struct oci_config *c)
{
	char buf[64];
	if (map_cgroups_path(m, c) < 0)
		return -1;
	if (c->cpu_shares) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->cpu_shares);
		put2(m, "--cpu-shares", buf);
	}
	if (c->mem_set) {
		if (c->mem < 4096)
			return fail(m, "linux.resources.memory.limit %llu is below 4096 bytes",
				    (unsigned long long)c->mem);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->mem);
		put2(m, "--memory", buf);
	}
	/* memory.swap is memory plus swap. A box never swaps, so any value
	 * at or above the memory limit (podman writes twice it) is a cap the
	 * box keeps more strictly: memory alone, swap 0. Below it is no
	 * limit the kernel takes. */
	if (c->swap_set && c->swap != UINT64_MAX && (!c->mem_set || c->swap < c->mem))
		return fail(m, "linux.resources.memory.swap %llu: a box never swaps (give -1, or a value at or "
			    "above linux.resources.memory.limit)", (unsigned long long)c->swap);
	if (c->pids_set) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->pids);
		put2(m, "--pids-limit", buf);
	}
	if (c->cpu_set) {
		unsigned long long micro = (unsigned long long)(c->cpu_quota * 1000000 / c->cpu_period);
		if (c->cpu_quota > UINT64_MAX / 1000000 || micro == 0)
			return fail(m, "linux.resources.cpu.quota %llu is out of range",
				    (unsigned long long)c->cpu_quota);
		snprintf(buf, sizeof buf, "%llu.%06llu", micro / 1000000, micro % 1000000);
		put2(m, "--cpus", buf);
	}
	return 0;
}

/* Root's boxes are owned by kern's subordinate ids, and a bound root is
 * an idmapped mount so that box root owns what host root does. The
 * engines' roots are overlayfs mounts (containerd's and podman's
 * snapshots), which the kernel cannot idmap: box root would own nothing
 * in its own root. A config without a user namespace asks for container
 * root to be host root (runc's model); kern gives it that inside a user
 * namespace mapping 0 to 0 (kern box --map-host-root), with the config's
 * bounding set, kern's seccomp and masks. A config that asks for a user
 * namespace on such a root is refused: kern cannot honour it there. */
static int map_root_owner(struct m *m, const struct oci_config *c, const char *root)
{
	struct statfs sf;
	if (geteuid() != 0)
		return 0;
	if (statfs(root, &sf) < 0)
		return fail(m, "root.path %s: statfs: %s", root, strerror(errno));
	if (sf.f_type != OVERLAYFS_SUPER_MAGIC)
		return 0;
	if (has_ns(c, "user"))
		return fail(m, "linux.namespaces: a 'user' entry on root.path %s, an overlayfs mount, is not "
			    "supported: the kernel cannot idmap it for kern's subordinate ids (leave 'user' out: "
			    "container root is then host root, in a user namespace mapping 0 to 0)", root);
	put(m, "--map-host-root");
	return 0;
}

int oci_map(const struct oci_config *c, const char *bundle, const char *id, struct strv *argv, char *why,
	    size_t wl)
{
	struct m m = {.argv = argv, .why = why, .wl = wl, .c = c};
	char root[PATH_MAX], buf[PATH_MAX + 64];

	if (oci_root_path(c, bundle, root, sizeof root, why, wl) < 0)
		return -1;
	if (strchr(bundle, '\n'))
		return fail(&m, "the bundle path holds a newline");
	put(&m, "box");
	put(&m, id);
	/* kern's notes are not the container's output. */
	put(&m, "-q");
	/* A pty of the box's own; kern-oci sends it to the console socket. */
	if (c->terminal)
		put(&m, "--tty");
	put2(&m, "--rootfs", root);
	if (map_root_owner(&m, c, root) < 0)
		return -1;
	/* The engine owns the root: writes land in it, as with runc, unless
	 * it is read-only (then an overlay whose writes are discarded). */
	put(&m, c->root_ro ? "--read-only" : "--bind-rootfs");
	if (map_namespaces(&m, c) < 0 || map_idmaps(&m, c) < 0)
		return -1;
	if (c->hostname && *c->hostname) {
		if (!has_ns(c, "uts"))
			return fail(&m, "hostname needs a uts namespace");
		put2(&m, "--hostname", c->hostname);
	}
	if (!path_is_clean_abs(c->cwd))
		return fail(&m, "process.cwd '%s' must be an absolute path without '.' or '..'", c->cwd);
	put2(&m, "--workdir", c->cwd);
	/* The process's groups are process.user.gid and additionalGids (which
	 * config.c lets hold the gid alone), as runc sets them: never the
	 * root's /etc/group, which kern box --user reads as a login does.
	 * Without --user, box root runs with no other group; with --user 0:0,
	 * a root whose /etc/group lists root in other groups (runtime-tools'
	 * own rootfs) fails setgroups(2) with EINVAL in root's single-id
	 * box, where those gids are not mapped. --userns yes keeps a host
	 * without user namespaces refusing container root, as --user 0:0
	 * made kern box do, instead of running it as nobody. */
	if (c->uid == 0 && c->gid == 0) {
		if (geteuid() == 0)
			put2(&m, "--userns", "yes");
	} else {
		snprintf(buf, sizeof buf, "%u:%u", (unsigned)c->uid, (unsigned)c->gid);
		put2(&m, "--user", buf);
	}
	for (int i = 0; i < c->nenv; i++) {
		if (!strchr(c->env[i], '=') || c->env[i][0] == '=')
			return fail(&m, "process.env[%d] is not KEY=VALUE", i);
		put2(&m, "--env", c->env[i]);
	}
	if (map_caps(&m, c) < 0 || map_rlimits(&m, c) < 0)
		return -1;
	if (c->apparmor && *c->apparmor)
		put2(&m, "--apparmor", c->apparmor);
	for (int i = 0; i < c->nmounts; i++)
		if (map_mount(&m, &c->mounts[i], i) < 0)
			return -1;
	if (map_paths(&m, c) < 0 || map_resources(&m, c) < 0)
		return -1;
	/* Compiled by kern-oci (seccomp.c) into its state directory. */
	if (c->seccomp_file)
		put2(&m, "--seccomp-bpf", c->seccomp_file);
	/* Written by kern-oci into the box's namespaces before start. */
	for (int i = 0; i < c->nsysctl; i++) {
		char path[256];
		if (oci_sysctl_ns(c->sysctl_key[i], has_ns(c, "network"), path, sizeof path, why, wl) < 0)
			return -1;
		if (strchr(c->sysctl_val[i], '\n'))
			return fail(&m, "linux.sysctl.%s: the value holds a newline", c->sysctl_key[i]);
	}
	/* kern ps shows the bundle (box labels). */
	snprintf(buf, sizeof buf, "oci.bundle=%s", bundle);
	put2(&m, "--label", buf);
	put(&m, "--");
	for (int i = 0; i < c->nargs; i++)
		put(&m, c->args[i]);
	if (m.oom)
		return fail(&m, "out of memory");
	return 0;
}
