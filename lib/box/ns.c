#include <errno.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/idmap.h"
#include "base/fdutil.h"
#include "box/ns.h"
#include "box/userns_why.h"
#include "egress/egress.h"

const char single_map_note[] =
	"this box ran with a single-id map (no subordinate id range was available); "
	"files owned by other users in the image appear as nobody";

/* subid_range()'s search, line by line (each_line(): no FILE, which
 * musl maps and unmaps again on every start). */
struct subid_find {
	const char *idstr, *login;
	unsigned long start, count;
	int found, done;
};

static void subid_line(char *line, void *ctx)
{
	struct subid_find *f = ctx;
	char *save = NULL;
	char *name = strtok_r(line, ":", &save), *s = strtok_r(NULL, ":", &save), *c = strtok_r(NULL, ":", &save);
	if (f->done || !name || !s || !c)
		return;
	int by_name = f->login && strcmp(name, f->login) == 0;
	if (!by_name && (f->found || strcmp(name, f->idstr) != 0))
		return;
	unsigned long st = strtoul(s, NULL, 10), ct = strtoul(c, NULL, 10);
	if (ct <= 1)
		return;
	f->start = st;
	f->count = ct;
	f->found = 1;
	f->done = by_name;
}

int subid_range(const char *file, uid_t id, const char *login, unsigned long *start,
		unsigned long *count)
{
	char idstr[24];
	snprintf(idstr, sizeof idstr, "%u", (unsigned)id);
	struct subid_find f = {.idstr = idstr, .login = login};
	if (each_line(file, subid_line, &f, 100000) < 0 || !f.found)
		return -1;
	*start = f.start;
	*count = f.count;
	return 0;
}

/* proc is /proc/self, or /proc/<pid> of a child cloned into its own user
 * namespace (the parent owns it, so it may write the single map). */
static int single_map(const char *proc, const struct ns_config *cfg)
{
	char map[64], path[64];
	snprintf(path, sizeof path, "%s/setgroups", proc);
	if (write_small_file(path, "deny") < 0 && errno != ENOENT) {
		setup_failed("write %s: %s (an AppArmor or sysctl restriction on unprivileged user "
			     "namespaces?)", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/uid_map", proc);
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)cfg->uid);
	if (write_small_file(path, map) < 0) {
		setup_failed_errno("write %s", path);
		return -1;
	}
	snprintf(path, sizeof path, "%s/gid_map", proc);
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)cfg->gid);
	if (write_small_file(path, map) < 0) {
		setup_failed_errno("write %s", path);
		return -1;
	}
	return 0;
}

/* newuidmap/newgidmap only from fixed system paths, never PATH. */
static const char *find_tool(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

struct range {
	unsigned long ustart, ucount, gstart, gcount;
};

static int run_tool(const char *tool, pid_t target, unsigned id, unsigned long start,
		    unsigned long count)
{
	char path[64], t[24], i[24], s[24], c[24];
	if (!find_tool(tool, path, sizeof path))
		return -1;
	snprintf(t, sizeof t, "%d", (int)target);
	snprintf(i, sizeof i, "%u", id);
	snprintf(s, sizeof s, "%lu", start);
	snprintf(c, sizeof c, "%lu", count);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		char *argv[] = {(char *)tool, t, "0", i, "1", "1", s, c, NULL};
		char *envp[] = {NULL};
		execve(path, argv, envp);
		_exit(127);
	}
	return p;
}

/* Maps the ranges of target's user namespace from its parent namespace:
 * directly as root, through the setuid helpers otherwise. 0 on success. */
static int range_map(pid_t target, const struct ns_config *cfg, const struct range *r)
{
	char path[64], map[128];
	if (geteuid() == 0) {
		snprintf(path, sizeof path, "/proc/%d/uid_map", (int)target);
		snprintf(map, sizeof map, "0 %u 1\n1 %lu %lu\n", (unsigned)cfg->uid, r->ustart, r->ucount);
		if (write_small_file(path, map) < 0)
			return -1;
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)target);
		snprintf(map, sizeof map, "0 %u 1\n1 %lu %lu\n", (unsigned)cfg->gid, r->gstart, r->gcount);
		return write_small_file(path, map);
	}
	int st1, st2;
	pid_t u = run_tool("newuidmap", target, (unsigned)cfg->uid, r->ustart, r->ucount);
	pid_t g = run_tool("newgidmap", target, (unsigned)cfg->gid, r->gstart, r->gcount);
	if (u < 0 || g < 0 || waitpid(u, &st1, 0) < 0 || waitpid(g, &st2, 0) < 0)
		return -1;
	return WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0 ? 0 : -1;
}

/* 1 when this process is in the initial user namespace, whose uid_map is
 * the whole identity. Root of a user namespace (unshare -r, a rootless
 * container) is some user on the host: its boxes map box root to it, as
 * any user's do, and it could not map a subordinate range anyway. */
int ns_initial_userns(void)
{
	static int known = -1;
	if (known < 0) {
		struct id_range r[2];
		known = idmap_is_initial(r, idmap_read("/proc/self/uid_map", r, 2));
	}
	return known;
}

void ns_give_stdio(unsigned long uid, unsigned long gid)
{
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st;
		struct statfs sf;
		/* Anonymous: pipe(2)'s, or a FIFO unlinked once opened (the
		 * Node package's pipes: Node has no pipe(2)); no path reaches
		 * either. */
		if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_uid == 0 && st.st_gid == 0 &&
		    (st.st_nlink == 0 || (fstatfs(fd, &sf) == 0 && sf.f_type == PIPEFS_MAGIC)) &&
		    fchown(fd, (uid_t)uid, (gid_t)gid) < 0)
			continue;	/* the box then fails to reopen it, no more */
	}
}

/* The host id box id 0 maps to in /proc/<pid>/<file>: 0, or -1. */
static int map_root(pid_t pid, const char *file, unsigned long *id)
{
	char path[64], buf[128] = "", *p = buf, *end;
	unsigned long v[2] = {1, 0};
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	int ok = read_small_file(path, buf, sizeof buf) >= 0;
	for (int i = 0; ok && i < 2; i++) {
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		ok = end != p && errno == 0;
		p = end;
	}
	if (!ok || v[0] != 0)
		return -1;
	*id = v[1];
	return 0;
}

int ns_box_root(pid_t pid, unsigned long *uid, unsigned long *gid)
{
	return map_root(pid, "uid_map", uid) == 0 && map_root(pid, "gid_map", gid) == 0 ? 0 : -1;
}

int ns_shifted(const struct ns_config *cfg)
{
	return !cfg->no_userns && cfg->uid == 0 && !cfg->host_root && ns_initial_userns();
}

void ns_root_ids(struct ns_ids *ids)
{
	unsigned long us, uc, gs, gc;
	/* A row that would put box root at host uid 0, or run past the
	 * largest id, is not a subordinate range: kern's own is used. */
	if (subid_range("/etc/subuid", 0, "root", &us, &uc) == 0 &&
	    subid_range("/etc/subgid", 0, "root", &gs, &gc) == 0 && us > 0 && gs > 0 &&
	    us + uc <= 4294967295UL && gs + gc <= 4294967295UL) {
		*ids = (struct ns_ids){us, uc, gs, gc, 1};
		return;
	}
	*ids = (struct ns_ids){NS_ROOT_BASE, NS_ROOT_COUNT, NS_ROOT_BASE, NS_ROOT_COUNT, 0};
}

/* A shifted box's maps, written by host root: `0 <base> 1`, or the whole
 * range from 0 for a range box. setgroups stays allowed, so PID 1 can drop
 * host root's supplementary groups (ns_become_root). */
static int shifted_map(pid_t target, const struct ns_config *cfg, int *ranged)
{
	const struct ns_ids ids = cfg->ids;
	char path[64], map[64];
	/* Ids never read (ns_root_ids) would map box root to host root. */
	if (ids.ubase == 0 || ids.gbase == 0) {
		setup_failed("internal: a shifted box's subordinate ids were not read");
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)target);
	snprintf(map, sizeof map, "0 %lu %lu\n", ids.ubase, cfg->range ? ids.ucount : 1UL);
	if (write_small_file(path, map) == 0) {
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)target);
		snprintf(map, sizeof map, "0 %lu %lu\n", ids.gbase, cfg->range ? ids.gcount : 1UL);
		if (write_small_file(path, map) == 0) {
			*ranged = cfg->range;
			return 0;
		}
	}
	setup_failed_errno("write %s (%s)", path, map);
	return -1;
}

int ns_become_root(const char **what)
{
	*what = "setgroups(0, NULL)";
	if (setgroups(0, NULL) < 0)
		return -1;
	*what = "setresgid(0, 0, 0)";
	if (setresgid(0, 0, 0) < 0)
		return -1;
	*what = "setresuid(0, 0, 0)";
	if (setresuid(0, 0, 0) < 0)
		return -1;
	/* The uid change cleared the parent-death signal. */
	*what = "prctl(PR_SET_PDEATHSIG)";
	return prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ? -1 : 0;
}

/* The id-map writer: forked before unshare, it waits for the go byte, then
 * maps the caller's new namespace and reports 0 or 1 as its exit status. */
static void map_writer(int go, pid_t target, const struct ns_config *cfg, const struct range *r)
{
	char b;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go, &b, 1) != 1)
		_exit(1);
	_exit(range_map(target, cfg, r) != 0);
}

static int have_range(const struct ns_config *cfg, struct range *r)
{
	struct passwd *pw = getpwuid(cfg->uid);
	const char *login = pw ? pw->pw_name : NULL;
	if (subid_range("/etc/subuid", cfg->uid, login, &r->ustart, &r->ucount) < 0 ||
	    subid_range("/etc/subgid", cfg->uid, login, &r->gstart, &r->gcount) < 0)
		return 0;
	if (geteuid() != 0) {
		char buf[64];
		if (!find_tool("newuidmap", buf, sizeof buf) || !find_tool("newgidmap", buf, sizeof buf))
			return 0;
	}
	return 1;
}

int ns_range_available(uid_t uid, int host_root)
{
	struct ns_config cfg = {.uid = uid, .host_root = host_root};
	struct range r;
	return ns_shifted(&cfg) || have_range(&cfg, &r);
}

/* Why an asked-for range (--uid-range) became a single-id map: none to be
 * had, or mapping it failed. A merely preferred range falls back quietly. */
static void single_map_warning(const struct ns_config *cfg, int failed)
{
	if (!cfg->range || !cfg->range_explicit)
		return;
	if (failed)
		warning("--uid-range: mapping the subordinate range failed; using a single-id map");
	else
		warning("--uid-range: no subordinate id range for uid %u in /etc/subuid and "
			"/etc/subgid (or no newuidmap/newgidmap); using a single-id map",
			(unsigned)cfg->uid);
}

int ns_flags(const struct ns_config *cfg)
{
	return (cfg->no_userns ? 0 : CLONE_NEWUSER) | CLONE_NEWPID | (cfg->keep_uts ? 0 : CLONE_NEWUTS) |
	       (cfg->keep_ipc ? 0 : CLONE_NEWIPC) | (cfg->net_host ? 0 : CLONE_NEWNET);
}

int ns_map(const struct ns_config *cfg, pid_t target, int *ranged)
{
	struct range r;
	char proc[32];
	*ranged = 0;
	if (cfg->no_userns)
		return 0;	/* no user namespace, no maps */
	if (ns_shifted(cfg))
		return shifted_map(target, cfg, ranged);
	if (cfg->range && have_range(cfg, &r)) {
		if (range_map(target, cfg, &r) == 0) {
			*ranged = 1;
			return 0;
		}
		single_map_warning(cfg, 1);
	} else {
		single_map_warning(cfg, 0);
	}
	snprintf(proc, sizeof proc, "/proc/%d", (int)target);
	return single_map(proc, cfg);
}

int ns_enter(const struct ns_config *cfg, int egress_ctl, int *ranged)
{
	int flags = ns_flags(cfg);
	struct range r;
	int go[2] = {-1, -1};
	pid_t writer = -1;

	*ranged = 0;
	if (ns_shifted(cfg)) {
		/* The namespaces would hold this very process, the supervisor,
		 * as a subordinate id: kern-wait makes them for PID 1 instead. */
		setup_failed("internal: kern-ns was asked to enter a shifted root map in-process");
		return -1;
	}
	if (cfg->no_userns) {
		/* Root without a user namespace: the rest, and no maps. */
		if (unshare(flags) < 0) {
			setup_failed_errno("unshare(CLONE_NEWPID|CLONE_NEWUTS|CLONE_NEWIPC%s)",
					   cfg->net_host ? "" : "|CLONE_NEWNET");
			return -1;
		}
		if (egress_ctl >= 0)
			egress_attach(egress_ctl);
		return 0;
	}
	if (cfg->range && have_range(cfg, &r)) {
		if (pipe2(go, O_CLOEXEC) < 0) {
			setup_failed_errno("pipe");
			return -1;
		}
		pid_t self = getpid();
		writer = fork();
		if (writer < 0) {
			setup_failed_errno("fork id-map writer");
			return -1;
		}
		if (writer == 0) {
			close(go[1]);
			map_writer(go[0], self, cfg, &r);
		}
		close(go[0]);
	} else {
		single_map_warning(cfg, 0);
	}

	if (unshare(flags) < 0) {
		int e = errno;
		if (writer > 0) {
			kill(writer, SIGKILL);
			waitpid(writer, NULL, 0);
		}
		userns_report("unshare", e, -1);
		return -1;
	}

	if (writer > 0) {
		int st = 1;
		if (write(go[1], "g", 1) != 1 || waitpid(writer, &st, 0) < 0)
			st = 1;
		close(go[1]);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			*ranged = 1;
		} else {
			single_map_warning(cfg, 1);
			if (single_map("/proc/self", cfg))
				return -1;
		}
	} else if (single_map("/proc/self", cfg)) {
		return -1;
	}
	if (egress_ctl >= 0)
		egress_attach(egress_ctl);
	return 0;
}
