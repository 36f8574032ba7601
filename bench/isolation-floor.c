/* isolation-floor ROOTFS RUNDIR [WITHOUT] [-- CMD ARG...]
 *
 * The kernel work of one default kern box and nothing else: no argument
 * checks, no registry, no diagnostics, every failure fatal. bench/box-startup
 * runs it beside kern, bwrap and unshare, so the ratios show what the
 * isolation itself costs on the machine and how much kern adds to it.
 *
 * In order: scratch dirs; memory and pids cgroups (v1, as root) with the
 * default caps and the workload leaf; clone into user, pid, net, ipc and
 * uts namespaces; the single-id maps, from outside; inside: the move into
 * the cgroup leaves, mount and cgroup namespaces, the writable layer (a
 * 256 MiB tmpfs over the scratch dir, kern's --disk default, with the
 * user-xattr probe and merged/upper/work made on it), overlay root, /dev
 * (tmpfs, five device binds, the four fd symlinks, shm, mqueue), /proc,
 * pivot_root, the /proc masks kern makes (isolation.md §4.3: six paths
 * read-only, seven under /dev/null, two empty, those the kernel has),
 * hostname, lo up, the bounding set, no_new_privs, kern's seccomp filter;
 * then /bin/true as init's child. Teardown: cgroups, scratch. Box root
 * is host root here, with no idmapped lower: kern's own --map-host-root
 * row in box-startup shows what the subordinate id costs (0-3%).
 *
 * WITHOUT, a comma-separated list, leaves parts out, so that box-startup
 * can show what each costs: cgroups, net (no network namespace), overlay
 * (a read-only bind of ROOTFS instead), dev (no /dev at all), proc (no
 * /proc and no masks), masks (/proc without its masks), seccomp (no
 * filter, no bounding-set drop).
 *
 * With -- CMD, CMD runs as init's child instead of /bin/true (found by
 * its path in the new root): bench/python-run-code's floor row runs the
 * package's runner with the host's python3 that way. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "seccomp_bpf.h"

#if defined(__x86_64__)
#define NATIVE 0
#else
#define NATIVE 1
#endif

static int without_cgroups, without_net, without_overlay, without_dev, without_proc,
	without_masks, without_seccomp;

static void parse_without(char *list)
{
	static const struct {
		const char *name;
		int *flag;
	} parts[] = {{"cgroups", &without_cgroups}, {"net", &without_net},
		     {"overlay", &without_overlay}, {"dev", &without_dev},
		     {"proc", &without_proc},       {"masks", &without_masks},
		     {"seccomp", &without_seccomp}};
	for (char *w = strtok(list, ","); w; w = strtok(NULL, ",")) {
		size_t i = 0;
		while (i < sizeof parts / sizeof parts[0] && strcmp(parts[i].name, w) != 0)
			i++;
		if (i == sizeof parts / sizeof parts[0]) {
			fprintf(stderr, "isolation-floor: unknown part '%s'\n", w);
			_exit(2);
		}
		*parts[i].flag = 1;
	}
}

static void die(const char *what)
{
	fprintf(stderr, "isolation-floor: %s: %s\n", what, strerror(errno));
	_exit(125);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

static void at(char *out, const char *dir, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

static const char *const controllers[] = {"memory", "pids"};
static char cg[2][PATH_MAX], leaf[2][PATH_MAX];

static void cgroups_make(void)
{
	char f[PATH_MAX];
	for (int i = 0; i < 2; i++) {
		snprintf(cg[i], sizeof cg[i], "/sys/fs/cgroup/%s/kern-floor-%d", controllers[i],
			 (int)getpid());
		if (mkdir(cg[i], 0755) < 0)
			die(cg[i]);
		at(f, cg[i], i == 0 ? "memory.limit_in_bytes" : "pids.max");
		put(f, i == 0 ? "536870912" : "512");
		at(leaf[i], cg[i], "box");
		if (mkdir(leaf[i], 0755) < 0)
			die(leaf[i]);
	}
}

static void bind_at(const char *src, const char *dst, unsigned long flags)
{
	if (mount(src, dst, NULL, MS_BIND | flags, NULL) < 0)
		die(dst);
}

static void build_root(const char *lower, const char *scratch)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom"};
	/* The masks of kern's default box (isolation.md §4.3; rootfs.c),
	 * those this kernel has: read-only, covered by /dev/null, empty. */
	static const char *const ro_over[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
					      "/proc/bus", "/proc/fs", "/proc/asound"};
	static const char *const null_over[] = {"/proc/kcore", "/proc/kallsyms", "/proc/kmsg",
						"/proc/keys", "/proc/latency_stats",
						"/proc/timer_list", "/proc/sched_debug"};
	static const char *const empty_over[] = {"/proc/scsi", "/proc/acpi"};
	static const char *const links[][2] = {{"fd", "/proc/self/fd"},
					       {"stdin", "/proc/self/fd/0"},
					       {"stdout", "/proc/self/fd/1"},
					       {"stderr", "/proc/self/fd/2"}};
	char m[PATH_MAX], p[PATH_MAX], opts[3 * PATH_MAX + 64];
	if (unshare(CLONE_NEWNS | CLONE_NEWCGROUP) < 0)
		die("unshare");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("private /");
	at(m, scratch, "merged");
	snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s/upper,workdir=%s/work,userxattr", lower,
		 scratch, scratch);
	if (!without_overlay) {
		static const char *const layer[] = {"merged", "upper", "work"};
		if (mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=268435456") < 0)
			die("tmpfs layer");
		if (setxattr(scratch, "user.kern", "", 0, 0) < 0)
			die("tmpfs layer xattr");
		for (size_t i = 0; i < 3; i++) {
			at(p, scratch, layer[i]);
			if (mkdir(p, 0700) < 0)
				die(p);
		}
	}
	if (without_overlay) {
		bind_at(lower, m, MS_REC);
		bind_at(NULL, m, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV);
	} else if (mount("overlay", m, "overlay", MS_NOSUID | MS_NODEV, opts) < 0) {
		die("overlay");
	}
	if (without_dev)
		goto proc;
	at(p, m, "dev");
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID, "mode=0755,size=64k,nr_inodes=64") < 0)
		die("tmpfs /dev");
	for (size_t i = 0; i < 5; i++) {
		char host[32];
		snprintf(p, sizeof p, "%s/dev/%s", m, nodes[i]);
		close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666));
		snprintf(host, sizeof host, "/dev/%s", nodes[i]);
		bind_at(host, p, 0);
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/dev/%s", m, links[i][0]);
		if (symlink(links[i][1], p) < 0)
			die(p);
	}
	snprintf(p, sizeof p, "%s/dev/shm", m);
	if (mkdir(p, 01777) < 0 ||
	    mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777") < 0)
		die("shm");
	snprintf(p, sizeof p, "%s/dev/mqueue", m);
	if (mkdir(p, 0755) < 0 || mount("mqueue", p, "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("mqueue");
proc:
	at(p, m, "proc");
	if (!without_proc && mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("proc");
	if (chdir(m) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		die("pivot_root");
	if (without_proc || without_masks)
		return;
	for (size_t i = 0; i < sizeof ro_over / sizeof ro_over[0]; i++)
		if (mount(ro_over[i], ro_over[i], NULL, MS_BIND | MS_REC, NULL) == 0)
			bind_at(NULL, ro_over[i], MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
	for (size_t i = 0; i < sizeof null_over / sizeof null_over[0]; i++)
		(void)mount("/dev/null", null_over[i], NULL, MS_BIND | MS_NOSUID, NULL);
	for (size_t i = 0; i < sizeof empty_over / sizeof empty_over[0]; i++)
		(void)mount("tmpfs", empty_over[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			    "size=0,mode=555");
}

static void lock_down(void)
{
	struct ifreq ifr = {.ifr_name = "lo"};
	if (!without_net) {
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
			die("lo");
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			die("lo up");
		close(s);
	}
	if (sethostname("floor", 5) < 0)
		die("sethostname");
	if (without_seccomp)
		return;
	for (int c = 0; prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0; c++)
		;
	struct sock_fprog prog = {.len = kern_seccomp_progs[NATIVE][0].len,
				  .filter = (struct sock_filter *)kern_seccomp_progs[NATIVE][0].insns};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		die("seccomp");
}

int main(int argc, char **argv)
{
	extern char **environ;
	char scratch[PATH_MAX], p[PATH_MAX];
	int go[2], st, nargs = argc;
	char *true_argv[] = {"/bin/true", NULL}, **cmd = true_argv;
	for (int i = 3; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			nargs = i;
			cmd = i + 1 < argc ? &argv[i + 1] : true_argv;
			break;
		}
	if (nargs < 3 || nargs > 4 || strlen(argv[1]) > 1024 || strlen(argv[2]) > 1024) {
		fputs("usage: isolation-floor ROOTFS RUNDIR [WITHOUT,...] [-- CMD ARG...] (paths under 1 KiB)\n",
		      stderr);
		return 2;
	}
	if (nargs == 4)
		parse_without(argv[3]);
	snprintf(scratch, sizeof scratch, "%s/floor-%d", argv[2], (int)getpid());
	static const char *const sub[] = {"", "/upper", "/work", "/merged"};
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s%s", scratch, sub[i]);
		if (mkdir(p, 0700) < 0)
			die(p);
	}
	if (!without_cgroups)
		cgroups_make();
	if (pipe2(go, O_CLOEXEC) < 0)
		die("pipe");
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
	if (!without_net)
		flags |= CLONE_NEWNET;
	pid_t pid1 = (pid_t)syscall(SYS_clone, flags, 0UL, 0UL, 0UL, 0UL);
	if (pid1 < 0)
		die("clone");
	if (pid1 == 0) {
		char b;
		if (read(go[0], &b, 1) != 1)
			_exit(125);
		/* Into the box cgroups as kern's PID 1 goes: this thread, by "0"
		 * in each leaf's tasks (no global lock, no RCU grace period). */
		for (int i = 0; i < 2 && !without_cgroups; i++) {
			at(p, leaf[i], "tasks");
			put(p, "0");
		}
		build_root(argv[1], scratch);
		lock_down();
		pid_t w;
		if (posix_spawn(&w, cmd[0], NULL, NULL, cmd, environ) != 0)
			_exit(127);
		while (waitpid(w, &st, 0) < 0 && errno == EINTR)
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128);
	}
	snprintf(p, sizeof p, "/proc/%d/setgroups", (int)pid1);
	put(p, "deny");
	snprintf(p, sizeof p, "/proc/%d/uid_map", (int)pid1);
	put(p, "0 0 1\n");
	snprintf(p, sizeof p, "/proc/%d/gid_map", (int)pid1);
	put(p, "0 0 1\n");
	if (write(go[1], "g", 1) != 1)
		die("go");
	while (waitpid(pid1, &st, 0) < 0 && errno == EINTR)
		;
	for (int i = 0; i < 2 && !without_cgroups; i++)
		if (rmdir(leaf[i]) < 0 || rmdir(cg[i]) < 0)
			die(cg[i]);
	static const char *const gone[] = {"/work/work", "/work", "/upper", "/merged", ""};
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof p, "%s%s", scratch, gone[i]);
		(void)rmdir(p);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 125;
}
