/* kern exec: run a command inside a running box (isolation.md §10,
 * box-cli.md §7.2).
 *
 * Three processes, so that the one the caller waits for never leaves the
 * host: kern exec itself finds the box, proves its PID 1, opens the
 * namespaces and the cgroup, and stays on the host to wait, forward
 * signals, read the OOM evidence and write the outcome bytes. Its child
 * joins the box cgroup and every namespace, then forks the command's
 * process, which is born inside the box's pid namespace; it waits for it
 * and relays its status. The command's process changes directory,
 * resolves -u in the box's own files, takes the box's RECORDED
 * capabilities, AppArmor profile, no_new_privs and seccomp mode, closes
 * every other descriptor and execs, in a session of its own (nothing it
 * does reaches the caller's terminal or process group). With -t the
 * relay makes a pty in the box (pty.h), the command takes its slave as
 * its terminal and kern exec relays the master (ttyrelay.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/clock.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/fdutil.h"
#include "base/path.h"
#include "base/strv.h"
#include "base/xdg.h"
#include "box/envfile.h"
#include "box/execpath.h"
#include "box/init.h"
#include "box/ns.h"
#include "box/pty.h"
#include "box/report.h"
#include "box/supervise.h"
#include "box/ttyrelay.h"
#include "box/users.h"
#include "cgroup/cgroup.h"
#include "lockdown/lockdown.h"
#include "state/boxproc.h"
#include "state/records.h"

static const char usage[] =
	"usage: kern exec NAME [-t] [-w DIR] [-u <user>] [-e K=V]... [--env-file PATH] -- CMD [ARG...]\n"
	"\n"
	"Run CMD inside the running box NAME: in its namespaces and cgroup, with its\n"
	"environment, its recorded capabilities and seccomp mode.\n"
	"\n"
	"  -w, --workdir DIR      working directory in the box (default: the box's)\n"
	"  -u, --user <user>      uid, name, uid:gid or name:group, resolved in the\n"
	"                         box's /etc/passwd and /etc/group (default: the box's)\n"
	"  -e, --env K=V          set a variable on top of the box's environment\n"
	"  --env-file PATH        KEY=VALUE lines (also /proc/self/fd/N)\n"
	"  -t, --tty              a terminal in the box for CMD (job control), relayed\n"
	"                         to yours; stdin must be a terminal\n"
	"  --seccomp-bpf FILE     a seccomp BPF program loaded as well (kern-oci's\n"
	"                         compiled linux.seccomp)\n"
	"\n"
	"KERN_STARTED_FD and KERN_ALIVE_FD work as for `kern box`.\n"
	"\n"
	"A box without a user namespace (kern box --userns=no): only root may exec\n"
	"into it; CMD runs as the box's workload ids with no capabilities, and as\n"
	"uid or gid 0 only if the box had --workload-is-host-root.\n"
	"\n"
	"Exit status: CMD's own; 128+N when it was killed by signal N; 127 when CMD\n"
	"or DIR cannot be used; 126 when CMD is not executable or kern refuses to run\n"
	"it (`kern: exec: ... - refusing to run`); 1 when there is no such box or for\n"
	"a usage error.\n";

#define MAX_ENV 1024
/* How long a box may take from its record to a PID 1 that finished setup. */
#define READY_WAIT_MS 3000

struct exec_args {
	const char *name;
	const char *workdir;		/* -w, or NULL */
	const char *user;		/* -u, or NULL */
	char *env_kv[MAX_ENV];
	int nenv_kv;
	struct strv envfile;
	char **cmd;
	int tty;			/* -t */
	const char *seccomp_bpf;	/* --seccomp-bpf FILE, or NULL */
};

struct exec_run {
	struct exec_args *a;
	struct box_record rec;
	struct box_procs bp;
	int nsfd[BOX_NS_COUNT];	/* in box_ns order (boxns.h); -1 where the namespace is already ours */
	int rootfd;			/* without a user namespace: PID 1's root; -1 */
	struct cg_box *cg;
	struct strv env;
	struct lockdown ld;
	const char *workdir;
	int workdir_given;
	int alive_fd, started_fd;
	int status_w;			/* command process -> kern exec: 'E' entered, 'R' refused */
	int relay_w;			/* relay -> kern exec: the command's wait status */
	int relay_pidfd;		/* the relay, for the command process to watch */
	int pty_w;			/* -t: relay -> kern exec, the pty master */
	int slave;			/* -t: the command's terminal; -1 */
	sigset_t orig;
};

/* A path inside the state directory st (a kern_runtime_each callback). */
static int under_dir(const char *st, void *real)
{
	char stc[PATH_MAX];
	if (!realpath(st, stc))
		snprintf(stc, sizeof stc, "%s", st);
	return path_is_under(real, stc);
}

/* A path inside kern's own state (runtime, cache, config, data, and every
 * other runtime directory that holds the caller's boxes). */
static int inside_state(const char *path)
{
	static const enum kern_dir dirs[] = {KDIR_RUNTIME, KDIR_CACHE, KDIR_CONFIG, KDIR_DATA};
	char real[PATH_MAX], st[PATH_MAX];
	if (!realpath(path, real))
		snprintf(real, sizeof real, "%s", path);
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (kern_dir(dirs[i], st, sizeof st, 0) == 0 && under_dir(st, real))
			return 1;
	return kern_runtime_each(under_dir, real);
}

/* Usage errors end kern exec here (die()). */
static void parse(int argc, char **argv, struct exec_args *a)
{
	char why[512];
	int i;
	for (i = 1; i < argc; i++) {
		char *t = argv[i];
		if (!strcmp(t, "--")) {
			i++;
			break;
		}
		if (t[0] != '-' || !t[1]) {
			if (a->name)
				break;	/* docker style: the command starts here */
			if (!box_name_valid(t))
				die("box", "bad box name '%s' (expected [A-Za-z0-9][A-Za-z0-9_.-]*, "
				    "1-64 bytes)", t);
			a->name = t;
			continue;
		}
		char flag[32], *v;
		char *eq = t[1] == '-' ? strchr(t, '=') : NULL;
		snprintf(flag, sizeof flag, "%.*s", eq ? (int)(eq - t) : (int)strlen(t), t);
		if ((!strcmp(flag, "-t") || !strcmp(flag, "--tty")) && !eq) {
			a->tty = 1;
			continue;
		}
		int known = !strcmp(flag, "-w") || !strcmp(flag, "--workdir") || !strcmp(flag, "-u") ||
			    !strcmp(flag, "--user") || !strcmp(flag, "-e") || !strcmp(flag, "--env") ||
			    !strcmp(flag, "--env-file") || !strcmp(flag, "--seccomp-bpf");
		if (!known)
			die("box", "unknown flag '%s'", flag);
		if (eq)
			v = eq + 1;
		else if (i + 1 < argc)
			v = argv[++i];
		else
			die("box", "flag '%s' needs a value", flag);
		if (flag[1] == 'w' || !strcmp(flag, "--workdir")) {
			if (!path_is_clean_abs(v))
				die("box", "-w must be an absolute path without '.' or '..': '%s'", v);
			a->workdir = v;
		} else if (flag[1] == 'u' || !strcmp(flag, "--user")) {
			if (!*v || strchr(v, '\n'))
				die("box", "bad --user '%s'", v);
			a->user = v;
		} else if (!strcmp(flag, "--seccomp-bpf")) {
			if (v[0] != '/')
				die("box", "--seccomp-bpf must be an absolute path, not '%s'", v);
			a->seccomp_bpf = v;
		} else if (!strcmp(flag, "--env-file")) {
			if (inside_state(v))
				die("box", "--env-file %s is inside kern's own state", v);
			if (envfile_read(v, &a->envfile, why, sizeof why) < 0)
				die("box", "--env-file: %s", why);
		} else {
			if (!strchr(v, '=') || v[0] == '=')
				die("box", "--env takes KEY=VALUE, not '%s'", v);
			if (a->nenv_kv >= MAX_ENV)
				die("box", "too many --env flags");
			a->env_kv[a->nenv_kv++] = v;
		}
	}
	if (!a->name) {
		fatal("box", "missing box NAME");
		die_hint("kern exec NAME -- CMD [ARG...]");
	}
	if (i >= argc) {
		fatal("box", "missing the command to run in box '%s'", a->name);
		die_hint("kern exec %s -- CMD [ARG...]", a->name);
	}
	if (a->tty && !isatty(0))
		die("box", "-t needs a terminal on stdin (the input device is not a TTY)");
	a->cmd = argv + i;
}

/* The live box, its PID 1 past setup (its seccomp filter is installed,
 * which happens right before it forks the workload) and the workload
 * alive. Returns 0, or -1 when there is no such running box. */
static int find_box(const char *name, struct exec_run *r)
{
	char runtime[PATH_MAX];
	/* kern box's runtime directory, or another candidate an older kern
	 * used (state/runtime_dirs.c). */
	if (records_find(name, runtime, sizeof runtime) < 0)
		return -1;
	for (long waited = 0;; waited += 2) {
		if (records_load(runtime, name, &r->rec) < 0)
			return -1;
		if (box_procs_open(&r->rec, &r->bp) < 0) {
			record_free(&r->rec);
			return -1;
		}
		if (r->bp.pid1_fd >= 0 && r->bp.work_fd >= 0 && proc_seccomp_on(r->bp.pid1) &&
		    record_has_ns(&r->rec) && !pidfd_exited(r->bp.pid1_fd))
			return 0;
		box_procs_close(&r->bp);
		record_free(&r->rec);
		if (waited >= READY_WAIT_MS)
			return -1;
		sleep_ms(2);
	}
}

/* `kern: exec: <why> - refusing to run`, exit 126, before or without
 * entering the box: nothing is written on KERN_STARTED_FD. */
static int refuse(int alive_fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(int alive_fd, const char *fmt, ...)
{
	char why[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	diag_line(0, "kern: exec: %s - refusing to run", why);
	alive_write(alive_fd, ALIVE_FAILED);
	return EXIT_NOEXEC;
}

/* The box's namespace descriptors, skipping those we already share. PID 1
 * is non-dumpable (boxns.h), so they are the supervisor's copies, reopened
 * through /proc/<supervisor>/fd; each must be a namespace of its kind. */
static int open_namespaces(struct exec_run *r)
{
	char path[64];
	for (size_t i = 0; i < BOX_NS_COUNT; i++)
		r->nsfd[i] = -1;
	for (size_t i = 0; i < BOX_NS_COUNT; i++) {
		snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)r->rec.sup_pid, r->rec.nsfd[i]);
		r->nsfd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (r->nsfd[i] < 0)
			break;
	}
	/* setns(2) into a mount namespace puts the caller at that namespace's
	 * root. A box with a user namespace pivoted its root to be just that;
	 * one without, started by kern in a chroot, pivoted only the chroot's
	 * root, and the namespace's root is still the tree outside it, the
	 * host's. So the command takes PID 1's own root, opened here, where
	 * the check below proves PID 1 is still the box's. */
	if (r->rec.no_userns) {
		snprintf(path, sizeof path, "/proc/%d/root", (int)r->bp.pid1);
		r->rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (r->rootfd < 0)
			return refuse(r->alive_fd, "open %s (the root of box '%s'): %s", path, r->rec.name,
				      strerror(errno));
	}
	/* The descriptors are the box's only if its supervisor and PID 1 are
	 * still the processes we proved. */
	if (pidfd_exited(r->bp.sup_fd) || pidfd_exited(r->bp.pid1_fd))
		die("box", "no running box named '%s'", r->rec.name);
	for (size_t i = 0; i < BOX_NS_COUNT; i++) {
		struct stat theirs, ours;
		snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)r->rec.sup_pid, r->rec.nsfd[i]);
		if (r->nsfd[i] < 0)
			return refuse(r->alive_fd, "open %s (the %s namespace of box '%s'): %s", path,
				      box_ns[i].name, r->rec.name, strerror(errno));
		if (ioctl(r->nsfd[i], NS_GET_NSTYPE) != box_ns[i].type)
			return refuse(r->alive_fd, "%s is not the %s namespace of box '%s'", path,
				      box_ns[i].name, r->rec.name);
		snprintf(path, sizeof path, "/proc/self/ns/%s", box_ns[i].name);
		if (fstat(r->nsfd[i], &theirs) < 0 || stat(path, &ours) < 0)
			return refuse(r->alive_fd, "stat %s: %s", path, strerror(errno));
		if (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino) {
			close(r->nsfd[i]);
			r->nsfd[i] = -1;
			/* A box without a user namespace shares ours (root's). */
			int own = CLONE_NEWNS | CLONE_NEWPID | (r->rec.no_userns ? 0 : CLONE_NEWUSER);
			if (box_ns[i].type & own)
				return refuse(r->alive_fd, "box '%s' does not have its own %s namespace",
					      r->rec.name, box_ns[i].name);
		}
	}
	return 0;
}

/* Everything that can be decided on the host from the record. */
static int prepare(struct exec_run *r)
{
	const struct exec_args *a = r->a;
	const char *why = NULL;
	int mode = seccomp_mode_parse(r->rec.seccomp);
	if (mode < 0)
		return refuse(r->alive_fd, "the record of box '%s' holds no valid seccomp mode ('%.40s')",
			      r->rec.name, r->rec.seccomp);
	r->ld.seccomp_mode = mode;
	r->ld.caps = r->rec.caps;
	if (a->seccomp_bpf) {
		struct sock_filter *prog;
		if (seccomp_prog_read(a->seccomp_bpf, &prog, &r->ld.extra_len) < 0)
			return refuse(r->alive_fd, "--seccomp-bpf %s: %s (whole BPF instructions, 1 to 4096)",
				      a->seccomp_bpf, strerror(errno));
		r->ld.extra_bpf = prog;
	}
	if (r->rec.no_userns) {
		/* Its namespaces belong to the host's user namespace: joining
		 * them takes root there. The command gets the workload's host
		 * ids, no capability, and uid 0 only as the box allowed. */
		if (geteuid() != 0)
			return refuse(r->alive_fd, "box '%s' runs without a user namespace; only root can "
				      "exec into it", r->rec.name);
		r->ld.host_ids = 1;
		r->ld.host_root_ok = r->rec.host_root;
		r->ld.caps = 0;
	}
	r->ld.restrict_sxid = r->rec.restrict_sxid;
	r->ld.apparmor = r->rec.apparmor[0] ? r->rec.apparmor : NULL;
	for (int i = 0; i < r->rec.nulimits; i++)
		if (ulimit_parse(r->rec.ulimits[i], &r->ld.ulimits[r->ld.nulimits++], &why) < 0)
			return refuse(r->alive_fd, "the record of box '%s' holds a bad ulimit '%.60s': %s",
				      r->rec.name, r->rec.ulimits[i], why);
	if (!a->user && r->rec.user[0] && user_parse_numeric(r->rec.user, &r->ld) < 0)
		return refuse(r->alive_fd, "the record of box '%s' holds a bad user '%.60s'", r->rec.name,
			      r->rec.user);
	/* The box's environment as its launcher built it, then ours on top. */
	if (r->rec.env) {
		for (char **e = r->rec.env; *e; e++)
			if (env_put(&r->env, *e) < 0)
				goto nomem;
	} else if (env_defaults(&r->env, r->rec.name) < 0) {
		goto nomem;
	}
	for (size_t i = 0; i < a->envfile.n; i++)
		if (env_put(&r->env, a->envfile.v[i]) < 0)
			goto nomem;
	for (int i = 0; i < a->nenv_kv; i++)
		if (env_put(&r->env, a->env_kv[i]) < 0)
			goto nomem;
	r->workdir_given = a->workdir != NULL;
	r->workdir = a->workdir ? a->workdir : (r->rec.workdir[0] ? r->rec.workdir : "/");
	if (cg_open_record(r->rec.cgroup, &r->cg) < 0 || !r->cg)
		return refuse(r->alive_fd, "cannot open the cgroup of box '%s' (%.200s): %s", r->rec.name,
			      r->rec.cgroup, strerror(errno));
	return open_namespaces(r);
nomem:
	return refuse(r->alive_fd, "out of memory");
}

/* ---- the command's process: inside the box ---- */

static void __attribute__((noreturn)) refuse_inside(struct exec_run *r, const char *why, int printed)
{
	(void)write_all(r->status_w, "R", 1);
	if (!printed)
		diag_line(0, "kern: exec: %s - refusing to run", why);
	alive_write(r->alive_fd, ALIVE_FAILED);
	_exit(EXIT_NOEXEC);
}

/* The working directory, resolved inside the box's root only: after
 * setns(mnt) "/" is the box root, RESOLVE_IN_ROOT keeps ".." and absolute
 * symlinks there, and RESOLVE_NO_MAGICLINKS refuses /proc/self/fd/N and
 * /proc/PID/cwd, which would reach whatever directory this process still
 * holds open from the host (runc CVE-2024-21626), even through a symlink
 * the box planted. ELOOP then. */
static int enter_workdir(const char *dir)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	int fd = (int)syscall(SYS_openat2, root, dir, &how, sizeof how);
	int e = errno;
	close(root);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	int rc = fchdir(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

static void __attribute__((noreturn)) command_main(struct exec_run *r)
{
	extern char **environ;
	char why[512];
	const char *cmd = r->a->cmd[0];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pidfd_exited(r->relay_pidfd))
		_exit(EXIT_NOEXEC);
	close(r->relay_w);
	/* A session of its own: the caller's terminal is nobody's controlling
	 * terminal in the box, and kill(0, ...) reaches only the command's
	 * own group. */
	if (setsid() < 0)
		refuse_inside(r, "setsid failed", 0);
	/* From here on the command counts as started (box-cli.md §4). */
	(void)write_all(r->status_w, "E", 1);

	if (enter_workdir(r->workdir) < 0) {
		int e = errno;
		if (r->workdir_given) {
			diag_line(0, "kern: cannot start '%s' in box: %s (os error %d)", cmd, strerror(e), e);
			hint("-w %s: the working directory cannot be used in box '%s'", r->workdir,
			     r->rec.name);
			alive_write(r->alive_fd, ALIVE_FAILED);
			_exit(EXIT_NOTFOUND);
		}
		/* The box's own workdir vanished: start at its root. */
		if (chdir("/") < 0)
			refuse_inside(r, "chdir /: cannot enter the box root", 0);
	}
	if (r->a->user) {
		/* After setns(mnt) "/" is the box's root: its /etc, never the host's. */
		int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int rc = rootfd < 0 ? -1 : user_resolve(rootfd, r->a->user, &r->ld, why, sizeof why);
		if (rootfd < 0)
			snprintf(why, sizeof why, "open /: %s", strerror(errno));
		else
			close(rootfd);
		if (rc < 0) {
			char msg[700];
			snprintf(msg, sizeof msg, "-u %s: %s", r->a->user, why);
			refuse_inside(r, msg, 0);
		}
	}
	if (r->slave >= 0) {
		/* The pty belongs to the user the command runs as (it takes
		 * CAP_CHOWN, which the lockdown drops). */
		if (r->ld.user_set && fchown(r->slave, r->ld.uid, (gid_t)-1) < 0)
			refuse_inside(r, "-t: cannot chown the pty to the command's user", 0);
		if (pty_take(r->slave) < 0)
			refuse_inside(r, "-t: cannot make the pty the command's terminal", 0);
	}
	if (lockdown_apply(&r->ld, 1) != 0)
		refuse_inside(r, "lockdown", 1);
	if (!seccomp_installed())
		refuse_inside(r, "the seccomp filter is not installed in this process", 0);
	/* A uid change clears the parent-death signal: set it again, then make
	 * sure the relay did not die in between. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pidfd_exited(r->relay_pidfd))
		_exit(EXIT_NOEXEC);
	int keep[2] = {r->alive_fd, r->status_w};
	close_fds_except(keep, 2);
	for (int i = 0; i < 2; i++)
		if (keep[i] >= 0)
			set_cloexec(keep[i], 1);
	init_signals_default();
	sigprocmask(SIG_SETMASK, &r->orig, NULL);
	/* The search takes PATH from environ: the box's. */
	char **host_env = environ;
	char path[PATH_MAX];
	environ = r->env.v;
	int e = exec_box_path(r->a->cmd, path);
	environ = host_env;
	exec_fail(cmd, e);
}

/* ---- the relay: joins the box, forks the command, relays its status ---- */

/* -t, in the box's namespaces: a pty of the box's /dev/pts when it has
 * one (kern box -t), else of a devpts instance made for this command and
 * attached nowhere. The master goes to kern exec; the command keeps the
 * slave. */
static void open_tty(struct exec_run *r)
{
	char why[512];
	int master, dir = pty_devpts_dir();
	if (dir < 0)
		dir = pty_devpts_detached();
	if (dir < 0)
		_exit(refuse(r->alive_fd, "-t: no devpts for box '%s': %s", r->rec.name, strerror(errno)));
	if (pty_open(dir, 0, -1, &master, &r->slave, why, sizeof why) < 0)
		_exit(refuse(r->alive_fd, "-t: %s", why));
	close(dir);
	char tag = PTY_TAG;
	if (send_fds(r->pty_w, &tag, 1, &master, 1) < 0)
		_exit(refuse(r->alive_fd, "-t: cannot hand the pty to kern exec: %s", send_fds_error(errno)));
	close(master);
	close(r->pty_w);
	r->pty_w = -1;
}

static void __attribute__((noreturn)) relay_main(struct exec_run *r, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(EXIT_NOEXEC);
	/* Out of the caller's session and process group: only kern exec
	 * signals the relay, and it passes on each signal once. */
	if (setsid() < 0)
		_exit(refuse(r->alive_fd, "setsid: %s", strerror(errno)));
	/* The command's process is born in the box's pid namespace and keeps
	 * this until its exec: nothing in the box may open its memory or its
	 * descriptors (/proc/PID/fd, pidfd_getfd) meanwhile. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(refuse(r->alive_fd, "prctl(PR_SET_DUMPABLE, 0): %s", strerror(errno)));
	if (r->started_fd >= 0)
		close(r->started_fd);
	/* Caps apply to what exec starts: join the box cgroup(s) while the
	 * host paths are still ours (isolation.md §7.8). */
	if (cg_join(r->cg) < 0)
		_exit(refuse(r->alive_fd, "cannot join the cgroup of box '%s': %s", r->rec.name,
			     strerror(errno)));
	/* No host cgroup directory and no pidfd goes into the box. */
	cg_close(r->cg);
	r->cg = NULL;
	box_procs_close(&r->bp);
	/* Still host root: the caller's stdio pipes become box root's, as
	 * PID 1's did (ns.h). */
	unsigned long root_uid, root_gid;
	if (r->rec.shifted && ns_box_root(r->rec.pid1, &root_uid, &root_gid) == 0)
		ns_give_stdio(root_uid, root_gid);
	/* Namespaces the box joined (kern box --netns, --ipcns, --utsns)
	 * belong to the host's user namespace, over which box root has no
	 * power: root joins them first, while still host root. */
	for (size_t i = 0; geteuid() == 0 && i < BOX_NS_COUNT; i++)
		if (r->nsfd[i] >= 0 && (box_ns[i].type & (CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)) &&
		    setns(r->nsfd[i], box_ns[i].type) == 0) {
			close(r->nsfd[i]);
			r->nsfd[i] = -1;
		}
	for (size_t i = 0; i < BOX_NS_COUNT; i++) {
		if (r->nsfd[i] < 0)
			continue;
		if (setns(r->nsfd[i], box_ns[i].type) < 0)
			_exit(refuse(r->alive_fd, "setns into the %s namespace of box '%s': %s",
				     box_ns[i].name, r->rec.name, strerror(errno)));
		close(r->nsfd[i]);
		r->nsfd[i] = -1;
	}
	if (r->rootfd >= 0) {
		if (fchdir(r->rootfd) < 0 || chroot(".") < 0)
			_exit(refuse(r->alive_fd, "enter the root of box '%s': %s", r->rec.name, strerror(errno)));
		close(r->rootfd);
		r->rootfd = -1;
	}
	/* A shifted box's map does not name host uid 0, which joining left
	 * us as: become its root, as its PID 1 did (ns.h). */
	const char *what;
	if (r->rec.shifted && ns_become_root(&what) < 0)
		_exit(refuse(r->alive_fd, "%s in box '%s': %s", what, r->rec.name, strerror(errno)));
	if (r->rec.shifted && getppid() != parent)
		_exit(EXIT_NOEXEC);
	if (r->a->tty)
		open_tty(r);
	r->relay_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	pid_t child = fork();
	if (child < 0)
		_exit(refuse(r->alive_fd, "fork: %s", strerror(errno)));
	if (child == 0)
		command_main(r);
	close(r->status_w);
	if (r->alive_fd >= 0)
		close(r->alive_fd);
	if (r->slave >= 0)
		close(r->slave);
	/* Forward what kern exec passes on. */
	sigset_t set;
	init_signal_set(&set);
	for (;;) {
		int st;
		forward_until_sigchld(child, &set, 0);
		if (waitpid(child, &st, WNOHANG) == child) {
			(void)write_all(r->relay_w, &st, sizeof st);
			_exit(0);
		}
	}
}

/* ---- kern exec itself: on the host ---- */

/* One message from the relay: the pty master (-t), or nothing. */
static void take_pty(int *sock, struct tty_relay *tr)
{
	char tag;
	int fd = -1, nfds = 0;
	long n = recv_fds(*sock, &tag, 1, &fd, 1, &nfds);
	if (n == 1 && tag == PTY_TAG && nfds == 1)
		tty_relay_begin(tr, fd);
	else if (nfds == 1)
		close(fd);
	close(*sock);
	*sock = -1;
}

static int run(struct exec_run *r)
{
	int status_p[2], relay_p[2], pty_p[2] = {-1, -1}, cst = 0, nsig = 0, forced = 0, done = 0;
	sigset_t block;
	struct tty_relay tr;

	tty_relay_init(&tr);
	if (pipe2(status_p, O_CLOEXEC) < 0 || pipe2(relay_p, O_CLOEXEC) < 0 ||
	    (r->a->tty && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pty_p) < 0))
		return refuse(r->alive_fd, "pipe: %s", strerror(errno));
	init_signal_set(&block);
	if (r->a->tty)
		sigaddset(&block, SIGWINCH);
	sigprocmask(SIG_BLOCK, &block, &r->orig);
	int sigfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return refuse(r->alive_fd, "signalfd: %s", strerror(errno));
	r->status_w = status_p[1];
	r->relay_w = relay_p[1];
	r->pty_w = pty_p[1];
	r->relay_pidfd = -1;
	pid_t self = getpid();
	pid_t relay = fork();
	if (relay == 0) {
		close(status_p[0]);
		close(relay_p[0]);
		close(sigfd);
		if (pty_p[0] >= 0)
			close(pty_p[0]);
		relay_main(r, self);
	}
	close(status_p[1]);
	close(relay_p[1]);
	if (pty_p[1] >= 0)
		close(pty_p[1]);
	for (size_t i = 0; i < BOX_NS_COUNT; i++)
		if (r->nsfd[i] >= 0)
			close(r->nsfd[i]);
	if (relay < 0)
		return refuse(r->alive_fd, "fork: %s", strerror(errno));
	/* The alive pipe now lives only in the relay and the command. */
	if (r->alive_fd >= 0)
		close(r->alive_fd);
	r->alive_fd = -1;
	alive_remember(-1);

	while (!done) {
		struct pollfd p[4] = {{.fd = sigfd, .events = POLLIN}, {.fd = pty_p[0], .events = POLLIN}};
		tty_relay_fds(&tr, p + 2);
		if (poll(p, 4, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			take_pty(&pty_p[0], &tr);
		tty_relay_pump(&tr, p + 2);
		struct signalfd_siginfo si;
		while (p[0].revents & POLLIN && read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
			int sig = (int)si.ssi_signo;
			if (sig == SIGCHLD) {
				done |= waitpid(relay, &cst, WNOHANG) == relay;
			} else if (sig == SIGWINCH) {
				tty_relay_resize(&tr);
			} else if (++nsig == 1) {
				/* The command is a session of its own: a terminal's
				 * signal reached only kern exec; it is passed on once. */
				kill(relay, sig);
			} else {
				/* A second one ends it: the command dies with its relay. */
				forced = 128 + sig;
				kill(relay, SIGKILL);
			}
		}
	}
	/* The command's last output, then the caller's terminal as it was. */
	tty_relay_end(&tr);
	if (pty_p[0] >= 0)
		close(pty_p[0]);
	close(sigfd);

	/* What the command's process said: 'E' once inside, 'R' if refused. */
	char buf[16];
	int entered = 0, refused = 0;
	for (;;) {
		ssize_t n = read(status_p[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			entered |= buf[i] == 'E';
			refused |= buf[i] == 'R';
		}
	}
	close(status_p[0]);
	int wst, have = read(relay_p[0], &wst, sizeof wst) == (ssize_t)sizeof wst;
	close(relay_p[0]);
	if (!have)
		wst = cst;	/* the relay refused, or died with the command */
	int sig = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
	int code = sig ? 128 + sig : WEXITSTATUS(wst);
	if (forced)
		code = forced;
	if (entered && !refused) {
		int oom = cg_oom_evidence(r->cg);
		if (oom)
			diag_line(0, "%s", oom_sentence);
		if (r->started_fd >= 0) {
			unsigned char bytes[4] = {1, (unsigned char)r->rec.byte1, (unsigned char)(oom ? 1 : 0),
						  (unsigned char)sig};
			(void)write_all(r->started_fd, bytes, 4);
		}
	}
	sigprocmask(SIG_SETMASK, &r->orig, NULL);
	return code;
}

static int exec_main(int argc, char **argv)
{
	struct exec_args a = {0};
	struct exec_run r = {.a = &a, .pty_w = -1, .slave = -1, .rootfd = -1};
	int rc;

	r.alive_fd = env_fd("KERN_ALIVE_FD");
	r.started_fd = env_fd("KERN_STARTED_FD");
	/* The alive byte first, before anything can take time (box-cli.md §5). */
	alive_write(r.alive_fd, ALIVE_STARTED);
	alive_remember(r.alive_fd);
	if (r.started_fd >= 0)
		set_cloexec(r.started_fd, 1);
	for (size_t i = 0; i < BOX_NS_COUNT; i++)
		r.nsfd[i] = -1;
	parse(argc, argv, &a);
	if (find_box(a.name, &r) < 0) {
		fatal("box", "no running box named '%s'", a.name);
		die_hint("`kern ps` lists the running boxes");
	}
	if ((rc = prepare(&r)) == 0)
		rc = run(&r);
	for (size_t i = 0; i < BOX_NS_COUNT; i++)
		if (r.nsfd[i] >= 0)
			close(r.nsfd[i]);
	if (r.cg)
		cg_close(r.cg);
	box_procs_close(&r.bp);
	record_free(&r.rec);
	strv_free(&r.env);
	strv_free(&a.envfile);
	return rc;
}

APPLET(exec, "run a command inside a running box", usage, exec_main);
