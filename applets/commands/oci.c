/* kern oci (kern-oci): kern as an OCI runtime, with runc's command line
 * as containerd's runc shim and Podman call it. A bundle's config.json is
 * read strictly (lib/ociruntime/config.c), turned into kern box flags
 * (map.c) and run by kern box itself (box_run), with one difference:
 * PID 1 stops before the workload until `start` opens the gate. The
 * container's pid is kern's supervisor: it is what create leaves
 * running, its exit status is the workload's, and signals reach the
 * workload through it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/fdutil.h"
#include "base/json.h"
#include "base/parse.h"
#include "base/strv.h"
#include "cgroup/cgroup.h"
#include "ociruntime/config.h"
#include "ociruntime/map.h"
#include "ociruntime/seccomp.h"
#include "ociruntime/state.h"
#include "state/boxproc.h"
#include "state/records.h"

#include "box.h"
#include "oci.h"

static const char usage[] =
	"usage: kern oci [global flags] VERB [flags] ID [...]\n"
	"       kern-oci ...   (the name an engine is given as its runtime binary)\n"
	"\n"
	"kern as an OCI runtime: runc's command line over an OCI bundle (config.json\n"
	"and a root directory). The bundle becomes the flags of a kern box, which runs\n"
	"it; a field kern cannot honour fails create with one line naming it.\n"
	"\n"
	"verbs:\n"
	"  create ID [-b|--bundle DIR] [--pid-file F] [--console-socket SOCK]\n"
	"                          build the box; PID 1 waits for start\n"
	"  start ID                run the container's process\n"
	"  run ID [-b DIR] [--pid-file F] [-d]   create and start; without -d wait, exit\n"
	"                          with the container's status and delete it\n"
	"  state ID                the OCI state JSON\n"
	"  kill ID [SIGNAL] [-a|--all]   SIGTERM by default; names (TERM, SIGTERM) or numbers\n"
	"  delete ID [-f|--force]  remove a stopped container (-f: kill it first)\n"
	"  exec ID [-p|--process FILE | CMD [ARG...]] [--cwd DIR] [-e K=V] [-u UID[:GID]]\n"
	"       [-d] [--pid-file F]    run a process in the container (kern exec)\n"
	"  ps ID [--format table|json]   the box's processes, as host pids\n"
	"  features                what this runtime supports, as JSON\n"
	"global flags:\n"
	"  --root DIR              state directory (default /run/kern-oci for root,\n"
	"                          $XDG_RUNTIME_DIR/kern-oci otherwise, also for uid 0\n"
	"                          of a rootless engine's user namespace)\n"
	"  --log FILE              also write errors there; --log-format text|json\n"
	"  --debug, --rootless V   accepted\n"
	"  --systemd-cgroup        refused: kern places cgroups itself (cgroupfs)\n"
	"\n"
	"The pid create writes (--pid-file, state) is kern's supervisor: its exit\n"
	"status is the container's, 128+N for a signal, 137 after an OOM kill.\n"
	"\n"
	"Exit status: 0; 1 for usage, a config kern refuses, or a verb that does not\n"
	"apply to the container's state; 125 when the box could not be set up; the\n"
	"container's own status for run without -d.\n";

#define OCI_VERSION "1.0.2"

struct oci_globals oci_g;

/* ---- errors: one line on stderr, and in --log when the engine gave one ---- */

static void log_line(const char *msg)
{
	if (!oci_g.log)
		return;
	int fd = open(oci_g.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	char ts[64], q[4200], line[4400];
	time_t now = time(NULL);
	struct tm tm;
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	if (oci_g.log_json) {
		if (json_quote(msg, q, sizeof q) < 0)
			snprintf(q, sizeof q, "\"(message too long)\"");
		snprintf(line, sizeof line, "{\"level\":\"error\",\"msg\":%s,\"time\":\"%s\"}\n", q, ts);
	} else {
		snprintf(line, sizeof line, "time=\"%s\" level=error msg=\"%s\"\n", ts, msg);
	}
	(void)write_all(fd, line, strlen(line));
	close(fd);
}

/* In the supervisor (diag_tee): kern box's own error lines, the real
 * reason a create failed, go to the log too; containerd's shim reports
 * the log's last error line, so a generic line after it would hide it. */
static void tee_errors(const char *line)
{
	if (!strncmp(line, "error: ", 7) || !strncmp(line, "kern: sandbox setup failed: ", 28))
		log_line(line);
}

static off_t log_size(void)
{
	struct stat st;
	return oci_g.log && stat(oci_g.log, &st) == 0 ? st.st_size : -1;
}

void oci_fail(int code, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_line(msg);
	fatal("oci", "%s", msg);
	exit(code);
}

/* ---- flags ---- */

/* The value of flag f at argv[*i] ("--f V" or "--f=V"), or NULL when
 * argv[*i] is not f. */
const char *oci_flag_value(int argc, char **argv, int *i, const char *f, const char *alias)
{
	const char *a = argv[*i];
	size_t n = strlen(f);
	if (!a)
		return NULL;
	if (!strncmp(a, f, n) && a[n] == '=')
		return a + n + 1;
	if (strcmp(a, f) != 0 && !(alias && !strcmp(a, alias)))
		return NULL;
	if (*i + 1 >= argc)
		oci_fail(EXIT_CLI, "flag '%s' needs a value", a);
	return argv[++*i];
}

struct verb_args {
	const char *id;
	const char *bundle, *pid_file, *console;
	const char *extra;	/* kill's signal */
	int detach, force, all;
};

/* Flags every verb may get from an engine; each verb checks the ones it
 * uses. Unknown flags are refused. */
static void verb_flags(const char *verb, int argc, char **argv, struct verb_args *v)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val;
		if (a[0] != '-' || !a[1]) {
			if (!v->id)
				v->id = a;
			else if (!v->extra)
				v->extra = a;
			else
				oci_fail(EXIT_CLI, "%s: unexpected argument '%s'", verb, a);
			continue;
		}
		if ((val = oci_flag_value(argc, argv, &i, "--bundle", "-b")))
			v->bundle = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--pid-file", NULL)))
			v->pid_file = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--console-socket", NULL)))
			v->console = val;
		else if ((val = oci_flag_value(argc, argv, &i, "--preserve-fds", NULL))) {
			if (strcmp(val, "0") != 0)
				oci_fail(EXIT_CLI, "%s: --preserve-fds is not supported (only 0)", verb);
		} else if (!strcmp(a, "--detach") || !strcmp(a, "-d"))
			v->detach = 1;
		else if (!strcmp(a, "--force") || !strcmp(a, "-f"))
			v->force = 1;
		else if (!strcmp(a, "--all") || !strcmp(a, "-a"))
			v->all = 1;
		else if (!strcmp(a, "--no-new-keyring"))
			; /* a box shares the session keyring no more than its user namespace lets it */
		else if (!strcmp(a, "--no-pivot"))
			oci_fail(EXIT_CLI, "%s: --no-pivot is not supported: kern always pivots into the root", verb);
		else
			oci_fail(EXIT_CLI, "%s: unknown flag '%s'", verb, a);
	}
	if (!v->id)
		oci_fail(EXIT_CLI, "%s: missing container ID", verb);
}

/* ROOT/ID, the id checked. */
void oci_dir(const char *id, char *dir, size_t len)
{
	char why[512];
	if (oci_state_dir(oci_g.root, id, dir, len, why, sizeof why) < 0)
		oci_fail(EXIT_CLI, "%s", why);
}

void oci_load(const char *id, const char *dir, struct oci_state *s)
{
	if (oci_state_read(dir, s) < 0) {
		if (errno == ENOENT)
			oci_fail(EXIT_CLI, "container %s does not exist", id);
		oci_fail(EXIT_CLI, "container %s: %s/" OCI_STATE_FILE ": %s", id, dir, strerror(errno));
	}
}

/* ---- create and run ---- */

char *oci_read_json(const char *verb, const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		oci_fail(EXIT_CLI, "%s: open %s: %s", verb, path, strerror(errno));
	/* The size first: nothing of an oversized file is read. */
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)OCI_CONFIG_MAX)
		oci_fail(EXIT_CLI, "%s: %s: %s", verb, path,
			 S_ISREG(st.st_mode) ? "larger than 4 MiB: refused" : "not a regular file");
	char *text = read_regular_fd(fd, OCI_CONFIG_MAX, (uid_t)-1, EFBIG, len);
	if (!text)
		oci_fail(EXIT_CLI, "%s: read %s: %s", verb, path, strerror(errno));
	return text;
}

/* config.json of bundle, read and mapped into kern box's argv. */
/* The config's compiled linux.seccomp, written into the container's
 * directory once it exists (write_seccomp()); kern box loads it. */
static struct sock_filter *seccomp_prog;
static unsigned seccomp_len;
static char seccomp_path[PATH_MAX + 32];

static void load_bundle(const char *bundle, const char *id, struct oci_config *c, struct strv *argv)
{
	char path[PATH_MAX], why[1024];
	size_t len;
	snprintf(path, sizeof path, "%s/config.json", bundle);
	char *text = oci_read_json("create", path, &len);
	if (oci_config_parse(text, len, c, why, sizeof why) < 0)
		oci_fail(EXIT_CLI, "create: config.json: %s", why);
	free(text);
	if (c->seccomp_json) {
		if (oci_seccomp_compile(c->seccomp_json, c->seccomp_len, &seccomp_prog, &seccomp_len, why,
					sizeof why) < 0)
			oci_fail(EXIT_CLI, "create: config.json: %s", why);
		oci_dir(id, path, sizeof path);
		snprintf(seccomp_path, sizeof seccomp_path, "%s/" OCI_SECCOMP_FILE, path);
		c->seccomp_file = seccomp_path;
	}
	if (oci_map(c, bundle, id, argv, why, sizeof why) < 0)
		oci_fail(EXIT_CLI, "create: config.json: %s", why);
}

/* What the workload inherits from the process that becomes the
 * supervisor and which kern box has no flag for. */
static void process_attributes(const struct oci_config *c)
{
	if (c->umask_set)
		umask((mode_t)c->umask);
	if (c->oom_adj_set) {
		char v[16];
		snprintf(v, sizeof v, "%d", c->oom_adj);
		if (write_small_file("/proc/self/oom_score_adj", v) < 0)
			oci_fail(EXIT_SETUP, "create: process.oomScoreAdj %d: write /proc/self/oom_score_adj: %s",
			     c->oom_adj, strerror(errno));
	}
}

/* The engine's console socket: the box's pty master goes there. */
static int console_connect(const char *verb, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		oci_fail(EXIT_CLI, "%s: --console-socket %s: path too long", verb, path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		oci_fail(EXIT_SETUP, "%s: connect --console-socket %s: %s", verb, path, strerror(errno));
	return fd;
}

/* The pid, written whole or not at all (temporary file, rename). */
int oci_pid_file(const char *path, pid_t pid)
{
	char tmp[PATH_MAX + 16], text[32];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid()) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int n = snprintf(text, sizeof text, "%d", (int)pid);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int bad = write_all(fd, text, (size_t)n) < 0;
	if (close(fd) < 0 || bad || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

static int write_seccomp(void)
{
	int fd = open(seccomp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int bad = write_all(fd, seccomp_prog, sizeof *seccomp_prog * seccomp_len) < 0;
	if (close(fd) < 0 || bad)
		return -1;
	return 0;
}

static void make_dirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0711) < 0 && errno != EEXIST)
			oci_fail(EXIT_SETUP, "mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		oci_fail(EXIT_SETUP, "mkdir %s: %s", p, strerror(errno));
	/* Containers' gates, state and locks live here: a directory another
	 * user made, or may write in, could swap them under the engine. */
	struct stat st;
	if (lstat(p, &st) < 0)
		oci_fail(EXIT_SETUP, "lstat %s: %s", p, strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		oci_fail(EXIT_CLI, "--root %s must be a directory of uid %u that no one else can write "
			 "(it is %s of uid %u, mode %04o): refusing", p, (unsigned)geteuid(),
			 S_ISDIR(st.st_mode) ? "a directory" : "not a directory", (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
}

/* create (gated: PID 1 waits for start), run -d (not gated), run (in
 * this process, to the end). Returns the exit status. */
static int start(struct verb_args *v);

static int own_net(const struct oci_config *c)
{
	for (int i = 0; i < c->nns; i++)
		if (!strcmp(c->ns[i], "network"))
			return 1;
	return 0;
}

static int create(const char *verb, struct verb_args *v, int gated, int foreground)
{
	static struct oci_config c;
	struct strv argv = {0};
	struct oci_state s = {0};
	char bundle[PATH_MAX], dir[PATH_MAX], gate[PATH_MAX + 8];

	oci_dir(v->id, dir, sizeof dir);
	if (!realpath(v->bundle ? v->bundle : ".", bundle))
		oci_fail(EXIT_CLI, "%s: bundle %s: %s", verb, v->bundle ? v->bundle : ".", strerror(errno));
	load_bundle(bundle, v->id, &c, &argv);
	if (v->console && !c.terminal)
		oci_fail(EXIT_CLI, "%s: --console-socket needs process.terminal: true", verb);
	if (c.terminal && !v->console && !foreground)
		oci_fail(EXIT_CLI, "%s: process.terminal needs --console-socket", verb);
	/* linux.sysctl is written while PID 1 waits at the gate: run -d
	 * becomes create then start; run in the foreground has no gate. */
	int then_start = 0;
	if (c.nsysctl && foreground)
		oci_fail(EXIT_CLI, "%s: linux.sysctl needs create and start, or run -d (a run in the foreground "
			 "starts the process before kern-oci could write it)", verb);
	if (c.nsysctl && !gated)
		gated = then_start = 1;
	int console = v->console ? console_connect(verb, v->console) : -1;

	/* The id is claimed by its directory; nothing else exists yet. */
	make_dirs(oci_g.root);
	if (mkdir(dir, 0700) < 0)
		oci_fail(EXIT_CLI, errno == EEXIST ? "%s: container %s already exists" : "%s: mkdir %s: %s", verb,
		     errno == EEXIST ? v->id : dir, strerror(errno));
	int lock = oci_state_lock(dir);
	if (seccomp_prog && write_seccomp() < 0) {
		int e = errno;
		oci_state_remove(dir);
		oci_fail(EXIT_SETUP, "%s: %s: %s", verb, seccomp_path, strerror(e));
	}
	snprintf(s.id, sizeof s.id, "%s", v->id);
	snprintf(s.bundle, sizeof s.bundle, "%s", bundle);
	s.creator = getpid();
	s.creator_start = proc_start_time(s.creator);
	s.created = (long long)time(NULL);
	s.annotations = c.annotations;
	s.started = !gated;
	if (foreground) {
		s.pid = s.creator;
		s.pid_start = s.creator_start;
	}
	if (lock < 0 || oci_state_write(dir, &s) < 0) {
		int e = errno;
		oci_state_remove(dir);
		oci_fail(EXIT_SETUP, "%s: %s/" OCI_STATE_FILE ": %s", verb, dir, strerror(e));
	}
	if (foreground) {
		if (v->pid_file && oci_pid_file(v->pid_file, getpid()) < 0) {
			int e = errno;
			oci_state_remove(dir);
			oci_fail(EXIT_SETUP, "%s: --pid-file %s: %s", verb, v->pid_file, strerror(e));
		}
		close(lock);
		process_attributes(&c);
		diag_tee = tee_errors;
		int rc = box_run((int)argv.n, argv.v, -1, -1, console);
		oci_state_remove(dir);
		return rc;
	}
	int gate_fd = -1, ready[2];
	snprintf(gate, sizeof gate, "%s/" OCI_GATE_FILE, dir);
	if (gated && (mkfifo(gate, 0600) < 0 || (gate_fd = open(gate, O_RDWR | O_CLOEXEC)) < 0)) {
		int e = errno;
		oci_state_remove(dir);
		oci_fail(EXIT_SETUP, "%s: start gate %s: %s", verb, gate, strerror(e));
	}
	if (pipe2(ready, O_CLOEXEC) < 0) {
		oci_state_remove(dir);
		oci_fail(EXIT_SETUP, "%s: pipe: %s", verb, strerror(errno));
	}
	off_t logged = log_size();
	pid_t sup = fork();
	if (sup < 0) {
		oci_state_remove(dir);
		oci_fail(EXIT_SETUP, "%s: fork: %s", verb, strerror(errno));
	}
	if (sup == 0) {
		/* The supervisor: a session of its own, orphaned when create
		 * exits (the engine's subreaper adopts it), with create's stdio,
		 * which the container's process inherits. */
		close(lock);
		close(ready[0]);
		setsid();
		process_attributes(&c);
		diag_tee = tee_errors;
		_exit(box_run((int)argv.n, argv.v, gate_fd, ready[1], console));
	}
	close(ready[1]);
	if (console >= 0)
		close(console);
	if (gate_fd >= 0)
		close(gate_fd);
	char msg[4200];
	size_t got = read_full(ready[0], msg, sizeof msg - 1);
	msg[got] = 0;
	close(ready[0]);
	if (!got || strtol(msg, NULL, 10) != 0 || msg[0] != '0') {
		/* kern box said why, on this stderr; its status is the exit status. */
		int st, code = EXIT_SETUP;
		while (waitpid(sup, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st) && WEXITSTATUS(st))
			code = WEXITSTATUS(st);
		oci_state_remove(dir);
		if (log_size() == logged) {
			snprintf(msg, sizeof msg, "%s: kern box ended with status %d before the container was ready",
				 verb, code);
			log_line(msg);
		}
		return code;
	}
	s.pid = sup;
	s.pid_start = proc_start_time(sup);
	const char *what = OCI_STATE_FILE;
	int rc = c.nsysctl ? oci_write_sysctls(v->id, sup, &c, own_net(&c)) : 0;
	if (rc) {
		/* Said why already; the box goes, as below. */
		kill(sup, SIGTERM);
		kill(sup, SIGTERM);
		while (waitpid(sup, NULL, 0) < 0 && errno == EINTR)
			;
		oci_state_remove(dir);
		return rc;
	}
	/* Before the pid file: the engine looks up that pid's memory cgroup
	 * as soon as create returns (oci_oom.c). */
	if (gated && !then_start)
		oci_oom_watch_join(dir, c.cgroups_path, sup);
	if (oci_state_write(dir, &s) < 0 || (what = "--pid-file", v->pid_file && oci_pid_file(v->pid_file, sup) < 0)) {
		/* No container the engine cannot find: the box goes (its
		 * supervisor tears it down on SIGTERM, PID 1 dies with it). */
		int e = errno;
		char why[PATH_MAX + 128];
		oci_oom_watch_leave(dir, sup, why, sizeof why);
		kill(sup, SIGTERM);
		kill(sup, SIGTERM);
		while (waitpid(sup, NULL, 0) < 0 && errno == EINTR)
			;
		oci_state_remove(dir);
		oci_fail(EXIT_SETUP, "%s: %s %s: %s", verb, what, what[0] == '-' ? v->pid_file : dir, strerror(e));
	}
	close(lock);
	return then_start ? start(v) : 0;
}

/* ---- start ---- */

/* The names (comm) of a process and its children, by
 * /proc/PID/task/PID/children. Returns the number of children read, -1
 * when the process is gone or the kernel has no children file. */
static int children(pid_t pid, pid_t *kids, int max)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	int n = 0;
	for (char *p = buf, *end; n < max && *p; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > 0)
			kids[n++] = (pid_t)v;
	}
	return n;
}

static int comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	return read_small_file(path, buf, len) < 0 ? -1 : 0;
}

/* 1 once the container's process is past its execve(2): a child of PID 1
 * (the supervisor's child) whose name is no longer PID 1's; also once
 * there is nothing to wait for (the box or the supervisor gone, no
 * children file). */
static int spawned(pid_t sup)
{
	pid_t init[4], kid[16];
	int ni = children(sup, init, 4);
	if (ni <= 0)
		return 1;
	for (int i = 0; i < ni; i++) {
		char a[64], b[64];
		int nk = children(init[i], kid, 16);
		if (nk < 0 || comm(init[i], a, sizeof a) < 0)
			continue;
		for (int k = 0; k < nk; k++)
			if (comm(kid[k], b, sizeof b) == 0 && strcmp(a, b) != 0)
				return 1;
	}
	return 0;
}

/* runc's start returns when its init is about to execve(2) the
 * container's process. kern's PID 1 spawns the process after it has read
 * start's byte: start waits for that (at most a second), so that a
 * signal sent as soon as start returns reaches the process, not a spawn
 * under way (runtime-tools' killsig validation: a USR1 that came first
 * ended the shell before its trap). */
static void wait_spawned(pid_t sup)
{
	const struct timespec ms = {0, 1000000};
	for (int i = 0; i < 1000 && !spawned(sup); i++)
		nanosleep(&ms, NULL);
}

static int start(struct verb_args *v)
{
	char dir[PATH_MAX], gate[PATH_MAX + 8];
	struct oci_state s;
	oci_dir(v->id, dir, sizeof dir);
	int lock = oci_state_lock(dir);
	if (lock < 0 && errno == ENOENT)
		oci_fail(EXIT_CLI, "container %s does not exist", v->id);
	if (lock < 0)
		oci_fail(EXIT_SETUP, "start: flock %s: %s", dir, strerror(errno));
	oci_load(v->id, dir, &s);
	const char *status = oci_state_status(&s);
	if (strcmp(status, "created") != 0)
		oci_fail(EXIT_CLI, "start: container %s is %s, not created", v->id, status);
	snprintf(gate, sizeof gate, "%s/" OCI_GATE_FILE, dir);
	int fd = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		oci_fail(EXIT_SETUP, "start: open %s: %s", gate, strerror(errno));
	/* The supervisor leaves the box's memory cgroup before anything of
	 * the workload runs (oci_oom.c). */
	char why[PATH_MAX + 128];
	if (oci_oom_watch_leave(dir, s.pid, why, sizeof why) < 0)
		oci_fail(EXIT_SETUP, "start: %s", why);
	s.started = 1;
	if (oci_state_write(dir, &s) < 0)
		oci_fail(EXIT_SETUP, "start: %s/" OCI_STATE_FILE ": %s", dir, strerror(errno));
	if (write(fd, "s", 1) != 1)
		oci_fail(EXIT_SETUP, "start: write %s: %s", gate, strerror(errno));
	close(fd);
	unlink(gate);
	pid_t sup = s.pid;
	oci_state_free(&s);
	close(lock);
	if (sup > 0)
		wait_spawned(sup);
	return 0;
}

/* ---- state ---- */

static int state(struct verb_args *v)
{
	char dir[PATH_MAX], id[6 * 65 + 3], bundle[PATH_MAX * 6 + 3];
	struct oci_state s;
	oci_dir(v->id, dir, sizeof dir);
	oci_load(v->id, dir, &s);
	const char *status = oci_state_status(&s);
	int has_pid = !strcmp(status, "created") || !strcmp(status, "running");
	json_quote(s.id, id, sizeof id);
	json_quote(s.bundle, bundle, sizeof bundle);
	printf("{\"ociVersion\":\"" OCI_VERSION "\",\"id\":%s,\"status\":\"%s\",\"pid\":%d,\"bundle\":%s,"
	       "\"annotations\":%s}\n", id, status, has_pid ? (int)s.pid : 0, bundle, s.annotations);
	oci_state_free(&s);
	return 0;
}

/* ---- kill ---- */

static int signal_number(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {{"HUP", SIGHUP},	  {"INT", SIGINT},	{"QUIT", SIGQUIT},   {"ILL", SIGILL},
		     {"TRAP", SIGTRAP},	  {"ABRT", SIGABRT},	{"IOT", SIGIOT},     {"BUS", SIGBUS},
		     {"FPE", SIGFPE},	  {"KILL", SIGKILL},	{"USR1", SIGUSR1},   {"SEGV", SIGSEGV},
		     {"USR2", SIGUSR2},	  {"PIPE", SIGPIPE},	{"ALRM", SIGALRM},   {"TERM", SIGTERM},
		     {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD},	{"CONT", SIGCONT},   {"STOP", SIGSTOP},
		     {"TSTP", SIGTSTP},	  {"TTIN", SIGTTIN},	{"TTOU", SIGTTOU},   {"URG", SIGURG},
		     {"XCPU", SIGXCPU},	  {"XFSZ", SIGXFSZ},	{"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
		     {"WINCH", SIGWINCH}, {"IO", SIGIO},	{"POLL", SIGPOLL},   {"PWR", SIGPWR},
		     {"SYS", SIGSYS}};
	unsigned long long n;
	if (parse_u64(s, &n) == 0)
		return n >= 1 && n <= (unsigned long long)SIGRTMAX ? (int)n : -1;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(names[i].name, s))
			return names[i].sig;
	return -1;
}

static int do_kill(struct verb_args *v)
{
	char dir[PATH_MAX], runtime[PATH_MAX];
	struct oci_state s;
	struct box_record rec = {0};
	struct box_procs bp;
	int sig = v->extra ? signal_number(v->extra) : SIGTERM;
	if (sig < 0)
		oci_fail(EXIT_CLI, "kill: unknown signal '%s'", v->extra);
	oci_dir(v->id, dir, sizeof dir);
	oci_load(v->id, dir, &s);
	const char *status = oci_state_status(&s);
	if (strcmp(status, "created") != 0 && strcmp(status, "running") != 0)
		oci_fail(EXIT_CLI, "kill: container %s is %s", v->id, status);
	if (records_find(v->id, runtime, sizeof runtime) < 0 || records_load(runtime, v->id, &rec) < 0 ||
	    rec.sup_pid != s.pid || box_procs_open(&rec, &bp) < 0)
		oci_fail(EXIT_CLI, "kill: container %s is not running", v->id);
	int rc = 0;
	/* A created box's supervisor leaves its memory cgroup first: its
	 * teardown then removes the cgroup (oci_oom.c). */
	char why[PATH_MAX + 128];
	if (!strcmp(status, "created"))
		oci_oom_watch_leave(dir, s.pid, why, sizeof why);
	/* The supervisor handles the stop signals as kern box does (passed on
	 * once, the second kills the box); SIGKILL goes to PID 1, whose end
	 * the supervisor sees and tears the box down after; the rest to PID 1,
	 * which passes SIGUSR1 and SIGUSR2 on to the workload. */
	int to_sup = sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
	/* --all on a running container: each process of the box once,
	 * directly (passed on by the supervisor or PID 1 as well, the
	 * container's process would get it twice). SIGKILL and a created
	 * container's kill go the usual way: both end the whole box. */
	if (v->all && bp.pid1 > 0 && sig != SIGKILL && strcmp(status, "running") == 0)
		oci_signal_all(bp.pid1, sig);
	else if (to_sup)
		rc = pidfd_signal(bp.sup_fd, sig);
	else if (bp.pid1_fd >= 0)
		rc = pidfd_signal(bp.pid1_fd, sig);
	else
		rc = pidfd_signal(bp.sup_fd, sig == SIGKILL ? SIGKILL : SIGTERM);
	int e = errno;
	box_procs_close(&bp);
	record_free(&rec);
	oci_state_free(&s);
	if (rc < 0)
		oci_fail(EXIT_SETUP, "kill: pidfd_send_signal: %s", strerror(e));
	return 0;
}

/* ---- delete ---- */

/* What a supervisor killed with SIGKILL left (it tears down its own box
 * otherwise): its box's processes, cgroup, scratch and record. */
static void reclaim(const char *id, pid_t sup)
{
	char runtime[PATH_MAX];
	struct box_record rec = {0};
	struct cg_box *cg;
	if (runtime_root(runtime, sizeof runtime) < 0 || records_load(runtime, id, &rec) < 0)
		return;
	if (rec.sup_pid == sup && !record_live(&rec)) {
		if (rec.cgroup[0] && cg_open_record(rec.cgroup, &cg) == 0)
			cg_teardown(cg);
		if (rec.scratch[0])
			scratch_remove(rec.scratch);
		records_remove(runtime, &rec);
	}
	record_free(&rec);
}

static int delete(struct verb_args *v)
{
	char dir[PATH_MAX], runtime[PATH_MAX];
	struct oci_state s;
	oci_dir(v->id, dir, sizeof dir);
	int lock = oci_state_lock(dir);
	if (lock < 0 && errno == ENOENT) {
		/* runc's rule: with -f, a container that is not there is deleted. */
		if (v->force)
			return 0;
		oci_fail(EXIT_CLI, "container %s does not exist", v->id);
	}
	/* A create that died before its first state write (its lock is
	 * ours now) left only the directory. */
	if (oci_state_read(dir, &s) < 0 && errno == ENOENT) {
		if (oci_state_remove(dir) < 0)
			oci_fail(EXIT_SETUP, "delete: remove %s: %s", dir, strerror(errno));
		return 0;
	}
	oci_state_free(&s);
	oci_load(v->id, dir, &s);
	const char *status = oci_state_status(&s);
	if (!strcmp(status, "running") && !v->force)
		oci_fail(EXIT_CLI, "delete: container %s is running: stop it first, or use --force", v->id);
	if (!strcmp(status, "creating"))
		oci_fail(EXIT_CLI, "delete: container %s is being created", v->id);
	if (strcmp(status, "stopped") != 0) {
		/* created, or running with -f: the box goes with its supervisor,
		 * which leaves the box's memory cgroup first (oci_oom.c). */
		struct box_record rec = {0};
		struct box_procs bp;
		char why[PATH_MAX + 128];
		oci_oom_watch_leave(dir, s.pid, why, sizeof why);
		if (records_find(v->id, runtime, sizeof runtime) == 0 &&
		    records_load(runtime, v->id, &rec) == 0 && rec.sup_pid == s.pid &&
		    box_procs_open(&rec, &bp) == 0) {
			if (bp.pid1_fd >= 0)
				pidfd_signal(bp.pid1_fd, SIGKILL);
			else
				pidfd_signal(bp.sup_fd, SIGTERM);
			if (!pidfd_wait_exit(bp.sup_fd, 5000))
				pidfd_signal(bp.sup_fd, SIGKILL);
			pidfd_wait_exit(bp.sup_fd, 2000);
			box_procs_close(&bp);
		}
		record_free(&rec);
	}
	reclaim(v->id, s.pid);
	if (oci_state_remove(dir) < 0)
		oci_fail(EXIT_SETUP, "delete: remove %s: %s", dir, strerror(errno));
	oci_state_free(&s);
	close(lock);
	return 0;
}

/* ---- features ---- */

static int features(void)
{
	/* features.md: what a config may hold and kern honours (config.c, map.c). */
	printf("{\"ociVersionMin\":\"1.0.0\",\"ociVersionMax\":\"1.2.0\","
	       "\"hooks\":[],"
	       "\"mountOptions\":[\"bind\",\"rbind\",\"ro\",\"rw\",\"nosuid\",\"nodev\",\"noexec\",\"private\","
	       "\"rprivate\",\"strictatime\",\"size\",\"mode\"],"
	       "\"linux\":{\"namespaces\":[\"pid\",\"mount\",\"ipc\",\"uts\",\"network\",\"user\",\"cgroup\"],"
	       "\"capabilities\":[");
	for (int i = 0; i <= 40; i++) {
		const char *n = cap_name(i);
		printf("%s\"CAP_%s\"", i ? "," : "", n ? n : "?");
	}
	printf("],\"cgroup\":{\"v1\":true,\"v2\":true,\"systemd\":false,\"systemdUser\":false,\"rdma\":false},"
	       /* seccomp.c: the actions and operators it compiles, this
	        * machine's architecture only (others are killed). */
	       "\"seccomp\":{\"enabled\":true,\"actions\":[\"SCMP_ACT_ALLOW\",\"SCMP_ACT_ERRNO\",\"SCMP_ACT_KILL\","
	       "\"SCMP_ACT_KILL_PROCESS\",\"SCMP_ACT_KILL_THREAD\",\"SCMP_ACT_LOG\",\"SCMP_ACT_TRAP\"],"
	       "\"operators\":[\"SCMP_CMP_EQ\",\"SCMP_CMP_GE\",\"SCMP_CMP_GT\",\"SCMP_CMP_LE\",\"SCMP_CMP_LT\","
	       "\"SCMP_CMP_MASKED_EQ\",\"SCMP_CMP_NE\"],"
#if defined(__x86_64__)
	       "\"archs\":[\"SCMP_ARCH_X86_64\"]},"
#else
	       "\"archs\":[\"SCMP_ARCH_AARCH64\"]},"
#endif
	       "\"apparmor\":{\"enabled\":true},\"selinux\":{\"enabled\":false},"
	       "\"intelRdt\":{\"enabled\":false},"
	       "\"mountExtensions\":{\"idmap\":{\"enabled\":false}}},"
	       "\"annotations\":{\"io.kern.noNewPrivileges\":\"always\","
	       "\"io.kern.pid\":\"the supervisor\"}}\n");
	return 0;
}

/* ---- the verbs ---- */

static int oci_main(int argc, char **argv)
{
	int i;
	const char *val;
	oci_default_root(oci_g.root, sizeof oci_g.root);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *arg = argv[i];
		if ((val = oci_flag_value(argc, argv, &i, "--root", NULL))) {
			if (val[0] != '/' || strlen(val) >= sizeof oci_g.root - 80)
				oci_fail(EXIT_CLI, "--root must be an absolute path shorter than %zu bytes, not '%s'",
				     sizeof oci_g.root - 80, val);
			snprintf(oci_g.root, sizeof oci_g.root, "%s", val);
		} else if ((val = oci_flag_value(argc, argv, &i, "--log", NULL))) {
			oci_g.log = val;
		} else if ((val = oci_flag_value(argc, argv, &i, "--log-format", NULL))) {
			if (strcmp(val, "json") != 0 && strcmp(val, "text") != 0)
				oci_fail(EXIT_CLI, "--log-format takes text or json, not '%s'", val);
			oci_g.log_json = !strcmp(val, "json");
		} else if (oci_flag_value(argc, argv, &i, "--criu", NULL)) {
			oci_fail(EXIT_CLI, "--criu is not supported: kern does not checkpoint");
		} else if (oci_flag_value(argc, argv, &i, "--rootless", NULL) || !strcmp(arg, "--debug")) {
			/* accepted: kern decides rootless itself; errors are its only log */
		} else if (!strcmp(arg, "--systemd-cgroup")) {
			oci_fail(EXIT_CLI, "--systemd-cgroup is not supported: kern places cgroups itself "
			     "(cgroupfs v1/v2); configure the engine with cgroup_manager = \"cgroupfs\"");
		} else {
			oci_fail(EXIT_CLI, "unknown global flag '%s'", arg);
		}
	}
	if (i >= argc)
		oci_fail(EXIT_CLI, "missing verb (create, start, state, kill, delete, run, features)");
	const char *verb = argv[i++];
	struct verb_args v = {0};
	if (!strcmp(verb, "features"))
		return features();
	static const char *const refused[] = {"pause", "resume", "update", "checkpoint", "restore", "events",
					      "spec", "list", NULL};
	for (int k = 0; refused[k]; k++)
		if (!strcmp(verb, refused[k]))
			oci_fail(EXIT_CLI, "%s is not supported", verb);
	if (!strcmp(verb, "exec"))
		return oci_exec(argc - i, argv + i);
	if (!strcmp(verb, "ps"))
		return oci_ps(argc - i, argv + i);
	verb_flags(verb, argc - i, argv + i, &v);
	if (!strcmp(verb, "create"))
		return create(verb, &v, 1, 0);
	if (!strcmp(verb, "run"))
		return create(verb, &v, 0, !v.detach);
	if (!strcmp(verb, "start"))
		return start(&v);
	if (!strcmp(verb, "state"))
		return state(&v);
	if (!strcmp(verb, "kill"))
		return do_kill(&v);
	if (!strcmp(verb, "delete"))
		return delete(&v);
	oci_fail(EXIT_CLI, "unknown verb '%s'", verb);
}

APPLET(oci, "an OCI runtime (runc's command line) over kern box", usage, oci_main);
