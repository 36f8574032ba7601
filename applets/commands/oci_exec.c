/* kern oci exec and ps: a process in a running container (oci.h).
 *
 * exec is `kern exec` on the container's box, the path any box's exec
 * takes: its namespaces and cgroup, its recorded capabilities, AppArmor
 * profile and seccomp mode. The process comes from --process FILE (an
 * engine's process.json, read by the rules of config.json) or from the
 * trailing argv with --cwd, --env and --user. What kern exec cannot give
 * a process of its own (other capabilities, rlimits or a profile than the
 * container's) is refused, naming the field. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/fdutil.h"
#include "base/parse.h"
#include "base/strv.h"
#include "ociruntime/config.h"
#include "state/boxproc.h"
#include "state/records.h"

#include "oci.h"

#define EXEC_MAX_ENV 1024

struct exec_args {
	const char *id, *process, *pid_file, *cwd, *user;
	const char *env[EXEC_MAX_ENV];
	int nenv;
	int detach;
	char **cmd;
	int ncmd;
};

/* runc exec's flags, then ID, then the command (never read as flags). */
static void exec_flags(int argc, char **argv, struct exec_args *x)
{
	static const char *const refused[] = {"--tty", "-t", "--console-socket", "--cap", "-c", "--apparmor",
					      "--process-label", "--additional-gids", "-g", "--cgroup", NULL};
	int i;
	for (i = 0; i < argc && !x->id; i++) {
		const char *a = argv[i], *val;
		if (a[0] != '-' || !a[1]) {
			x->id = a;
			break;
		}
		if ((val = oci_flag_value(argc, argv, &i, "--process", "-p")))
			x->process = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--pid-file", NULL)))
			x->pid_file = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--cwd", NULL)))
			x->cwd = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--user", "-u")))
			x->user = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--env", "-e"))) {
			if (x->nenv >= EXEC_MAX_ENV)
				oci_fail(EXIT_CLI, "exec: more than %d --env", EXEC_MAX_ENV);
			x->env[x->nenv++] = val;
		} else if ((val = oci_flag_value(argc, argv, &i, "--preserve-fds", NULL))) {
			if (strcmp(val, "0") != 0)
				oci_fail(EXIT_CLI, "exec: --preserve-fds is not supported (only 0)");
		} else if (!strcmp(a, "--detach") || !strcmp(a, "-d")) {
			x->detach = 1;
		} else if (!strcmp(a, "--no-new-privs") || !strcmp(a, "--ignore-paused")) {
			/* kern sets no_new_privs always; a box is never paused */
		} else {
			for (int k = 0; refused[k]; k++)
				if (!strncmp(a, refused[k], strlen(refused[k])) &&
				    (!a[strlen(refused[k])] || a[strlen(refused[k])] == '='))
					oci_fail(EXIT_CLI, "exec: %s is not supported", refused[k]);
			oci_fail(EXIT_CLI, "exec: unknown flag '%s'", a);
		}
	}
	if (!x->id)
		oci_fail(EXIT_CLI, "exec: missing container ID");
	x->cmd = argv + i + 1;
	x->ncmd = argc - i - 1;
	if (x->ncmd > 0 && !strcmp(x->cmd[0], "--")) {
		x->cmd++;
		x->ncmd--;
	}
	if (x->process && x->ncmd)
		oci_fail(EXIT_CLI, "exec: --process and a command are mutually exclusive");
	if (!x->process && !x->ncmd)
		oci_fail(EXIT_CLI, "exec: no command (give --process FILE or a command after the ID)");
}

static int same_list(const char *const *a, int na, const char *const *b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++) {
		int hit = 0;
		for (int k = 0; k < nb && !hit; k++)
			hit = !strcmp(a[i], b[k]);
		if (!hit)
			return 0;
	}
	return 1;
}

/* The field of p that asks for a lockdown other than the container's
 * (c, its config.json), or NULL: kern exec applies the box's own. */
static const char *other_lockdown(const struct oci_config *p, const struct oci_config *c)
{
	static const char *const sets[] = {"process.capabilities.bounding", "process.capabilities.effective",
					   "process.capabilities.permitted", "process.capabilities.inheritable",
					   "process.capabilities.ambient"};
	if (p->caps_set)
		for (int s = 0; s < OCI_CAP_SETS; s++)
			if (!c->caps_set || !same_list(p->caps[s], p->ncaps[s], c->caps[s], c->ncaps[s]))
				return sets[s];
	if (p->nrlimits) {
		if (p->nrlimits != c->nrlimits)
			return "process.rlimits";
		for (int i = 0; i < p->nrlimits; i++)
			if (strcmp(p->rlimits[i].type, c->rlimits[i].type) != 0 ||
			    p->rlimits[i].soft != c->rlimits[i].soft || p->rlimits[i].hard != c->rlimits[i].hard)
				return "process.rlimits";
	}
	if (p->apparmor && *p->apparmor && (!c->apparmor || strcmp(p->apparmor, c->apparmor) != 0))
		return "process.apparmorProfile";
	if (p->oom_adj_set || p->umask_set)
		return p->oom_adj_set ? "process.oomScoreAdj" : "process.user.umask";
	if (p->terminal)
		return "process.terminal";
	return NULL;
}

/* --process FILE into kern exec's flags. */
static void process_flags(const char *file, const struct oci_state *s, struct strv *argv)
{
	static struct oci_config p, c;
	char why[1024], path[PATH_MAX + 16], ids[32];
	size_t len;
	char *text = oci_read_json("exec", file, &len);
	if (oci_process_parse(text, len, &p, why, sizeof why) < 0)
		oci_fail(EXIT_CLI, "exec: %s: %s", file, why);
	free(text);
	snprintf(path, sizeof path, "%s/config.json", s->bundle);
	text = oci_read_json("exec", path, &len);
	if (oci_config_parse(text, len, &c, why, sizeof why) < 0)
		oci_fail(EXIT_CLI, "exec: the container's %s: %s", path, why);
	free(text);
	const char *field = other_lockdown(&p, &c);
	if (field)
		oci_fail(EXIT_CLI, "exec: %s: %s other than the container's is not supported (kern exec "
			 "gives a process the box's own)", file, field);
	if (strv_push(argv, "-w") < 0 || strv_push(argv, p.cwd) < 0)
		oci_fail(EXIT_SETUP, "out of memory");
	snprintf(ids, sizeof ids, "%u:%u", (unsigned)p.uid, (unsigned)p.gid);
	if (strv_push(argv, "-u") < 0 || strv_push(argv, ids) < 0)
		oci_fail(EXIT_SETUP, "out of memory");
	for (int i = 0; i < p.nenv; i++)
		if (strv_push(argv, "-e") < 0 || strv_push(argv, p.env[i]) < 0)
			oci_fail(EXIT_SETUP, "out of memory");
	if (strv_push(argv, "--") < 0)
		oci_fail(EXIT_SETUP, "out of memory");
	for (int i = 0; i < p.nargs; i++)
		if (strv_push(argv, p.args[i]) < 0)
			oci_fail(EXIT_SETUP, "out of memory");
}

int oci_exec(int argc, char **argv)
{
	static struct exec_args x;
	struct strv kargv = {0};
	struct oci_state s;
	char dir[PATH_MAX];
	exec_flags(argc, argv, &x);
	oci_dir(x.id, dir, sizeof dir);
	oci_load(x.id, dir, &s);
	const char *status = oci_state_status(&s);
	if (strcmp(status, "running") != 0 && strcmp(status, "created") != 0)
		oci_fail(EXIT_CLI, "exec: container %s is %s", x.id, status);
	if (strv_push(&kargv, "exec") < 0 || strv_push(&kargv, x.id) < 0)
		oci_fail(EXIT_SETUP, "out of memory");
	/* The config's compiled linux.seccomp, as the container's process has it. */
	char bpf[PATH_MAX + 32];
	snprintf(bpf, sizeof bpf, "%s/" OCI_SECCOMP_FILE, dir);
	if (access(bpf, F_OK) == 0 && (strv_push(&kargv, "--seccomp-bpf") < 0 || strv_push(&kargv, bpf) < 0))
		oci_fail(EXIT_SETUP, "out of memory");
	if (x.process) {
		process_flags(x.process, &s, &kargv);
	} else {
		const char *pairs[][2] = {{"-w", x.cwd}, {"-u", x.user}};
		for (size_t i = 0; i < 2; i++)
			if (pairs[i][1] && (strv_push(&kargv, pairs[i][0]) < 0 || strv_push(&kargv, pairs[i][1]) < 0))
				oci_fail(EXIT_SETUP, "out of memory");
		for (int i = 0; i < x.nenv; i++)
			if (strv_push(&kargv, "-e") < 0 || strv_push(&kargv, x.env[i]) < 0)
				oci_fail(EXIT_SETUP, "out of memory");
		if (strv_push(&kargv, "--") < 0)
			oci_fail(EXIT_SETUP, "out of memory");
		for (int i = 0; i < x.ncmd; i++)
			if (strv_push(&kargv, x.cmd[i]) < 0)
				oci_fail(EXIT_SETUP, "out of memory");
	}
	oci_state_free(&s);
	const struct applet *exec = applet_find("exec");
	if (!x.detach) {
		if (x.pid_file && oci_pid_file(x.pid_file, getpid()) < 0)
			oci_fail(EXIT_SETUP, "exec: --pid-file %s: %s", x.pid_file, strerror(errno));
		return exec->main((int)kargv.n, kargv.v);
	}
	/* -d: kern exec in a session of its own, left to the caller's
	 * subreaper; its pid and exit status are the process's. */
	pid_t pid = fork();
	if (pid < 0)
		oci_fail(EXIT_SETUP, "exec: fork: %s", strerror(errno));
	if (pid == 0) {
		setsid();
		_exit(exec->main((int)kargv.n, kargv.v));
	}
	if (x.pid_file && oci_pid_file(x.pid_file, pid) < 0)
		oci_fail(EXIT_SETUP, "exec: --pid-file %s: %s", x.pid_file, strerror(errno));
	return 0;
}

/* Each process of pid1's pid namespace but pid1 itself, with a pidfd
 * opened before its namespace is compared: fn gets only processes that
 * were in the box when looked at, and a pid reused since then is out of
 * reach of that pidfd (ESRCH). fn returns nonzero to stop. */
static void box_scan(pid_t pid1, int (*fn)(pid_t pid, int pidfd, void *ctx), void *ctx)
{
	char path[64];
	struct stat ns, st;
	snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)pid1);
	if (stat(path, &ns) < 0)
		return;
	DIR *d = opendir("/proc");
	struct dirent *e;
	int stop = 0;
	while (d && !stop && (e = readdir(d))) {
		unsigned long long pid;
		if (parse_u64(e->d_name, &pid) < 0 || pid <= 1 || pid == (unsigned long long)pid1 || pid > INT32_MAX)
			continue;
		int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
		if (fd < 0)
			continue;
		snprintf(path, sizeof path, "/proc/%llu/ns/pid", pid);
		if (stat(path, &st) == 0 && st.st_dev == ns.st_dev && st.st_ino == ns.st_ino)
			stop = fn((pid_t)pid, fd, ctx);
		close(fd);
	}
	if (d)
		closedir(d);
}

static int signal_one(pid_t pid, int pidfd, void *ctx)
{
	(void)pid;
	(void)pidfd_signal(pidfd, *(int *)ctx);
	return 0;
}

void oci_signal_all(pid_t pid1, int sig)
{
	box_scan(pid1, signal_one, &sig);
}

struct pid_list {
	pid_t *out;
	int n, max;
};

static int list_one(pid_t pid, int pidfd, void *ctx)
{
	struct pid_list *l = ctx;
	(void)pidfd;
	l->out[l->n++] = pid;
	return l->n >= l->max;
}

int oci_box_pids(pid_t pid1, pid_t *out, int max)
{
	struct pid_list l = {.out = out, .n = 0, .max = max};
	if (max < 1)
		return 0;
	out[l.n++] = pid1;
	if (l.n < max)
		box_scan(pid1, list_one, &l);
	return l.n;
}

int oci_ps(int argc, char **argv)
{
	const char *id = NULL, *format = "table", *val;
	char dir[PATH_MAX], runtime[PATH_MAX];
	static pid_t pids[65536];
	struct oci_state s;
	struct box_record rec = {0};
	struct box_procs bp;
	for (int i = 0; i < argc; i++) {
		if ((val = oci_flag_value(argc, argv, &i, "--format", "-f")))
			format = val;
		else if (argv[i][0] == '-')
			oci_fail(EXIT_CLI, "ps: unknown flag '%s'", argv[i]);
		else if (!id)
			id = argv[i];
		else
			oci_fail(EXIT_CLI, "ps: ps arguments are not supported ('%s')", argv[i]);
	}
	if (!id)
		oci_fail(EXIT_CLI, "ps: missing container ID");
	if (strcmp(format, "json") != 0 && strcmp(format, "table") != 0)
		oci_fail(EXIT_CLI, "ps: --format takes table or json, not '%s'", format);
	oci_dir(id, dir, sizeof dir);
	oci_load(id, dir, &s);
	int n = 0;
	if (records_find(id, runtime, sizeof runtime) == 0 && records_load(runtime, id, &rec) == 0 &&
	    rec.sup_pid == s.pid && box_procs_open(&rec, &bp) == 0) {
		if (bp.pid1 > 0)
			n = oci_box_pids(bp.pid1, pids, (int)(sizeof pids / sizeof pids[0]));
		box_procs_close(&bp);
	}
	record_free(&rec);
	oci_state_free(&s);
	if (!strcmp(format, "json")) {
		printf("[");
		for (int i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)pids[i]);
		printf("]\n");
		return 0;
	}
	printf("PID\tCMD\n");
	for (int i = 0; i < n; i++) {
		char path[64], cmd[256];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)pids[i]);
		if (read_small_file(path, cmd, sizeof cmd) < 0)
			continue;
		cmd[strcspn(cmd, "\n")] = 0;
		printf("%d\t%s\n", (int)pids[i], cmd);
	}
	return 0;
}
