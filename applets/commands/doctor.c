/* kern doctor: one screen saying what this host can enforce for boxes run
 * by this user, each missing piece with its fix. Every answer comes from
 * trying the thing (a user namespace, an overlay inside one, a real box
 * cgroup with caps read back), not from guessing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/fdutil.h"
#include "base/xdg.h"
#include "box/idmount.h"
#include "box/ns.h"
#include "box/userns_why.h"
#include "cgroup/cgroup.h"
#include "cgroup/layout.h"

static const char usage[] =
"usage: kern doctor\n"
"\n"
"Say what this host can enforce for boxes run by this user: user\n"
"namespaces, uid ranges, overlay in a user namespace, the cgroup layout and\n"
"which caps kern can apply as this user, seccomp, AppArmor, Landlock; each\n"
"missing piece with its fix. Exit 0 when a capped box can run here, 2 when\n"
"something a box needs is missing. As root a \"box mode\" row says whether\n"
"boxes get a user namespace; where the kernel refuses one, root's boxes run\n"
"without it (kern box --userns=no), which is not counted as a problem.\n";

static int problems;

static void row(const char *what, const char *verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void row(const char *what, const char *verdict, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	printf("  %-18s %-6s %s\n", what, verdict, text);
}

static void fix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fix(const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	printf("  %-18s %-6s fix: %s\n", "", "", text);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Run probe in a child; its exit status is 0 or an errno. */
static int in_child(int (*probe)(void))
{
	int st;
	pid_t p = fork();
	if (p == 0)
		_exit(probe());
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

static int probe_userns(void)
{
	return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

/* Overlay with its lower on the host filesystem and upper/work on a
 * tmpfs, inside a fresh user and mount namespace, as a box's root is. */
static int probe_overlay(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return errno;
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
	if (write_str("/proc/self/uid_map", map) < 0)
		return errno;
	(void)write_str("/proc/self/setgroups", "deny");
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
	if (write_str("/proc/self/gid_map", map) < 0)
		return errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("doctor", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0)
		return errno;
	if (mkdir("/tmp/u", 0755) < 0 || mkdir("/tmp/w", 0755) < 0 || mkdir("/tmp/m", 0755) < 0)
		return errno;
	if (mount("overlay", "/tmp/m", "overlay", MS_NOSUID | MS_NODEV,
		  "lowerdir=/etc,upperdir=/tmp/u,workdir=/tmp/w") < 0)
		return errno;
	return 0;
}

static void check_userns(int *userns_ok)
{
	int e = in_child(probe_userns);
	struct userns_why w;
	*userns_ok = e == 0;
	if (e == 0) {
		row("user namespaces", "ok", "this user can create them");
		if (geteuid() == 0)
			row("box mode", "userns", "boxes get a user namespace (--userns=auto); --userns=no "
			    "boxes without one");
		return;
	}
	userns_why(e, &w);
	/* Root still boxes, without one (box/nouserns.h): not a problem. */
	int root = geteuid() == 0;
	if (!root)
		problems++;
	row("user namespaces", "NO", "unshare(CLONE_NEWUSER): %s%s%s; %s", strerror(e),
	    w.why[0] ? ": " : "", w.why, root ? "boxes run without one (root mode)" : "no box can start");
	if (w.fix[0])
		fix("%s", w.fix);
	if (root)
		row("box mode", "no-userns", "every namespace but the user one; the workload runs as uid "
		    "65534 (or --user) with no capabilities (--userns=no)");
}

static void check_ranges(void)
{
	uid_t uid = geteuid();
	struct passwd *pw = getpwuid(uid);
	const char *login = pw ? pw->pw_name : "?";
	unsigned long us, uc, gs, gc;
	int hu = subid_range("/etc/subuid", uid, login, &us, &uc) == 0;
	int hg = subid_range("/etc/subgid", uid, login, &gs, &gc) == 0;
	if (hu && hg && ns_range_available(uid, 1)) {
		row("uid ranges", "ok", "%s maps %lu uids from %lu and %lu gids from %lu%s", login, uc, us,
		    gc, gs, uid == 0 ? " (written directly as root)" : " via newuidmap/newgidmap");
		return;
	}
	if (uid == 0) {
		struct ns_ids ids;
		ns_root_ids(&ids);
		row("uid ranges", "ok", "root has no /etc/subuid and /etc/subgid rows: its boxes map %lu "
		    "ids from %lu, kern's default range (with --map-host-root: single-id maps only)",
		    ids.ucount, ids.ubase);
		return;
	}
	row("uid ranges", "none", "images with several users (--user, --uid-range) fall back to a "
	    "single-id map");
	if (!hu || !hg)
		fix("usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s", login);
	else
		fix("apt-get install uidmap (newuidmap and newgidmap)");
}

/* Who box root is on the host (isolation.md §3): the caller, or for root
 * a subordinate id, with the idmapped mounts that needs tried for real on
 * the image cache. */
static void check_box_root(int userns_ok)
{
	char cache[4096];
	const char *what;
	struct ns_ids ids;
	uid_t uid = geteuid();
	if (uid != 0) {
		row("box root", "ok", "you (uid %u): a box holds no more over host files than you do",
		    (unsigned)uid);
		return;
	}
	if (!userns_ok) {
		row("box root", "-", "no user namespace: box root would be host root, so the workload "
		    "runs as uid 65534 with no capabilities");
		return;
	}
	ns_root_ids(&ids);
	if (kern_dir(KDIR_CACHE, cache, sizeof cache, 0) < 0 || access(cache, F_OK) < 0)
		snprintf(cache, sizeof cache, "/");
	if (idm_probe(cache, &what) == 0) {
		row("box root", "ok", "host uid %lu, not host root: %lu ids from %lu (%s); binds and image "
		    "roots are idmapped, so root's files keep their owner; --map-host-root maps box root "
		    "to host root instead", ids.ubase, ids.ucount, ids.ubase,
		    ids.from_subid ? "root's /etc/subuid and /etc/subgid rows" : "kern's default range");
		return;
	}
	problems++;
	row("box root", "NO", "host uid %lu, not host root; but %s %s: %s, so image boxes cannot start "
	    "(--map-host-root maps box root to host root)", ids.ubase, what, cache, strerror(errno));
	fix("keep kern's image cache (XDG_CACHE_HOME) on a filesystem with idmapped mounts (ext4, xfs, "
	    "btrfs, tmpfs; Linux 5.12 or later), or run boxes with --map-host-root");
}

static void check_overlay(int userns_ok)
{
	int e;
	if (!userns_ok) {
		row("overlay in userns", "-", geteuid() == 0 ? "not needed (no user namespace: root mounts "
		    "the overlay in the box's mount namespace)" : "needs user namespaces");
		return;
	}
	e = in_child(probe_overlay);
	if (e == 0) {
		row("overlay in userns", "ok", "an overlay root mounts inside a user namespace");
		return;
	}
	problems++;
	row("overlay in userns", "NO", "mount overlay: %s; image boxes cannot start", strerror(e));
	fix("Linux 5.11 or later with overlayfs (modprobe overlay)");
}

static const char *layout_text(struct cg_layout *l, char *buf, size_t len)
{
	size_t o = 0;
	if (l->version == 2) {
		snprintf(buf, len, "cgroup v2 at /sys/fs/cgroup");
		return buf;
	}
	if (l->version == 0) {
		snprintf(buf, len, "no cgroup controllers mounted");
		return buf;
	}
	o += (size_t)snprintf(buf, len, "v1/hybrid:");
	for (int c = 0; c < CG_NCTL && o < len; c++) {
		struct cg_mount *m = cg_mount_of(l, (enum cg_ctl)c);
		if (m)
			o += (size_t)snprintf(buf + o, len - o, " %s", cg_ctl_name((enum cg_ctl)c));
	}
	if (o < len)
		snprintf(buf + o, len - o, " on v1 mounts");
	return buf;
}

static void delegation_fix(struct cg_layout *l, uid_t uid)
{
	if (l->version == 1) {
		fix("as root: for c in memory pids cpu; do d=/sys/fs/cgroup/$c/kern/user-%u; "
		    "mkdir -p $d && chown -R %u $d; done", (unsigned)uid, (unsigned)uid);
		return;
	}
	fix("log in through systemd (user@%u.service delegates memory and pids), or run kern "
	    "inside `systemd-run --user --scope -p Delegate=yes`, or, as root, move this user's "
	    "session into a cgroup owned by uid %u with +memory +pids in its parent's "
	    "cgroup.subtree_control", (unsigned)uid, (unsigned)uid);
}

static int check_cgroups(void)
{
	struct cg_layout l;
	struct cg_limits req = {.memory = 64 << 20, .memory_given = 1, .pids = 64, .pids_given = 1,
				.cpu_micro = 500000, .allow_uncapped = 1};
	struct cg_box *cg = NULL;
	char buf[512];
	uid_t uid = geteuid();
	unsigned e;

	if (cg_detect(&l) < 0)
		memset(&l, 0, sizeof l);
	row("cgroups", l.version ? "ok" : "NO", "%s", layout_text(&l, buf, sizeof buf));
	req.no_scope = env_get("KERN_NO_SCOPE") != NULL;
	if (cg_create("doctor", getpid(), &req, &cg) != 0 || !cg) {
		row("caps as this user", "NO", "creating a box cgroup failed (see the line above)");
		return 0;
	}
	e = cg_enforced(cg);
	snprintf(buf, sizeof buf, "%s%s%s", e & CG_HAS_MEMORY ? " memory" : "",
		 e & CG_HAS_PIDS ? " pids" : "", e & CG_HAS_CPU ? " cpu" : "");
	if ((e & (CG_HAS_MEMORY | CG_HAS_PIDS)) == (CG_HAS_MEMORY | CG_HAS_PIDS))
		row("caps as this user", "ok", "%s enforced (%s)", buf + 1, cg_describe(cg));
	else if (e)
		row("caps as this user", "part", "only%s enforced (%s)", buf, cg_describe(cg));
	else
		row("caps as this user", "NO", "none: boxes run without memory and pids caps (with a "
		    "warning; --require-limits refuses)");
	if (!(e & CG_HAS_MEMORY) || !(e & CG_HAS_PIDS)) {
		if (l.version && !cg_mount_of(&l, CG_MEMORY) && l.version == 1)
			fix("boot with cgroup_enable=memory swapaccount=1");
		else if (uid != 0)
			delegation_fix(&l, uid);
		else
			fix("mount the memory and pids controllers (cgroup v2 at /sys/fs/cgroup, or v1 "
			    "hierarchies) writable for root");
	}
	cg_destroy(cg);
	return (e & (CG_HAS_MEMORY | CG_HAS_PIDS)) == (CG_HAS_MEMORY | CG_HAS_PIDS);
}

static void check_seccomp(int *ok)
{
	char buf[256] = "";
	(void)read_small_file("/proc/sys/kernel/seccomp/actions_avail", buf, sizeof buf);
	buf[strcspn(buf, "\n")] = 0;
	*ok = prctl(PR_GET_SECCOMP) >= 0 && strstr(buf, "kill_process") && strstr(buf, "errno");
	if (*ok) {
		row("seccomp", "ok", "filters available (%s)", buf);
		return;
	}
	problems++;
	row("seccomp", "NO", "no seccomp filters with kill_process and errno; no box can start");
	fix("a kernel with CONFIG_SECCOMP_FILTER (Linux 4.14 or later)");
}

static void check_apparmor(void)
{
	char v[8] = "";
	(void)read_small_file("/sys/module/apparmor/parameters/enabled", v, sizeof v);
	if (v[0] == 'Y' && access("/sys/kernel/security/apparmor", F_OK) == 0) {
		row("AppArmor", "ok", "enabled: --apparmor NAME can confine a box with a loaded profile");
		return;
	}
	row("AppArmor", "absent", "--apparmor NAME is refused (125); everything else works");
	if (v[0] == 'Y')
		fix("mount securityfs: mount -t securityfs securityfs /sys/kernel/security");
	else
		fix("boot with apparmor=1 security=apparmor and install the apparmor package "
		    "(only needed for --apparmor)");
}

static void check_landlock(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi > 0)
		row("Landlock", "ok", "ABI %ld in the kernel; kern does not use it in this build "
		    "(KERN_LANDLOCK_REQUIRED makes every box refuse to start)", abi);
	else
		row("Landlock", "absent", "%s; kern does not use it in this build",
		    errno == EOPNOTSUPP ? "disabled at boot (lsm=)" : "not in this kernel");
}

static int doctor_main(int argc, char **argv)
{
	struct utsname u;
	struct passwd *pw = getpwuid(geteuid());
	int userns_ok, seccomp_ok, caps_ok;
	(void)argv;
	if (argc > 1)
		die("box", "doctor takes no arguments");
	uname(&u);
	problems = 0;
	printf("kern doctor: what this host enforces for boxes run by uid %u (%s), Linux %s %s\n",
	       (unsigned)geteuid(), pw ? pw->pw_name : "?", u.release, u.machine);
	fflush(stdout);
	check_userns(&userns_ok);
	check_ranges();
	check_box_root(userns_ok);
	check_overlay(userns_ok);
	fflush(stdout);
	caps_ok = check_cgroups();
	check_seccomp(&seccomp_ok);
	check_apparmor();
	check_landlock();
	fflush(stdout);
	return problems == 0 && caps_ok ? 0 : 2;
}

APPLET(doctor, "say what this host can enforce, and how to fix what it cannot", usage, doctor_main);
