/* kern spawner: start processes for a language binding, so that the
 * binding never forks itself (kern-spawner(1)).
 *
 * Node's child_process.spawn fork()s the whole Node process and blocks its
 * event loop until the child has exec'd: about 4 ms per start for a 50 MB
 * process, where CPython vforks in about 1 ms (bindings/node/README.md,
 * Measured). The Node package keeps one `kern spawner` instead, a small
 * process that posix_spawn()s (a vfork: no copy of an address space) what
 * the package asks for on stdin and reports on stdout. It never waits for
 * one child: every end is collected through a signalfd.
 *
 * Every byte of stdin is hostile: the framing is bounded, every field is
 * checked, and a bad request gets one line while nothing runs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/fdutil.h"
#include "base/parse.h"

static const char usage[] =
	"usage: kern spawner\n"
	"\n"
	"Internal interface of the language bindings (man kern-spawner): read\n"
	"requests on standard input, start each process with posix_spawn, and\n"
	"report its start and its end on standard output. Ends when its input\n"
	"has ended and every process it started has been reported.\n"
	"\n"
	"Exit status: 0 at the end of input, 1 for a usage error or input whose\n"
	"framing is broken (after the processes it started were reported).\n";

/* The first line on stdout: a kern without this command prints an error
 * instead, which is how a binding tells (kern-spawner(1), PROTOCOL). */
#define GREETING "kern-spawner 1"
/* A request: decimal length, '\n', that many bytes. 4 MiB is twice what
 * execve(2) accepts for argv and environment under the default 8 MiB
 * stack, so no request a binding can run is refused for its size. */
#define REQUEST_MAX (4u << 20)
#define LENGTH_DIGITS_MAX 7
#define ID_MAX 32
/* Fields per request: 2 MiB of pointers at most, where execve(2) would
 * take more only as arguments of a byte or two. */
#define FIELDS_MAX (1u << 18)
/* How many started processes may be running at once. */
#define CHILDREN_MAX 4096
/* The fixed fields: verb, id, fd 0-4, cwd, argc, envc; then the file. */
enum { F_VERB, F_ID, F_FD0, F_CWD = F_FD0 + 5, F_ARGC, F_ENVC, F_FILE };
/* Where an opened descriptor is moved, clear of 0-4 in the child. */
#define FD_FLOOR 10

struct child {
	pid_t pid;
	char id[ID_MAX + 1];
};

static struct child *children;
static size_t nchildren;

/* One reply line: control bytes (a newline in an echoed path) become '?',
 * so a reply is always exactly one line; one write(2). A caller that is
 * gone (EPIPE) is ignored: its processes are still collected. */
static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reply(const char *fmt, ...)
{
	char line[2 * 4096 + 256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[len++] = '\n';
	(void)write_all(STDOUT_FILENO, line, len);
}

/* "-" or an absolute path shorter than PATH_MAX. */
static int path_field_ok(const char *s)
{
	return strcmp(s, "-") == 0 || (s[0] == '/' && strlen(s) < 4096);
}

/* Open what the child gets as descriptor t, moved to FD_FLOOR or above,
 * close-on-exec (posix_spawn's dup2 clears that on the copy). O_NONBLOCK for
 * the open only: a FIFO nobody reads is refused (ENXIO) instead of blocking
 * every other request; the child gets an ordinary blocking descriptor.
 * -1 with errno; -2 for "-" above fd 2 (closed in the child). */
static int open_for_child(int t, const char *path)
{
	if (strcmp(path, "-") == 0) {
		if (t > 2)
			return -2;
		path = "/dev/null";
	}
	int fd = open(path, (t == 0 ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int fl = fcntl(fd, F_GETFL);
	int moved = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, FD_FLOOR);
	int saved = errno;
	close(fd);
	errno = saved;
	return moved;
}

/* Start f[F_FILE] with argv and envp; "S id pid" or "F id ...". */
static void spawn_one(char **f, char **argv, char **envp)
{
	const char *id = f[F_ID];
	int fds[5] = {-2, -2, -2, -2, -2};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	pid_t pid = -1;
	int err = 0;

	if (nchildren == CHILDREN_MAX) {
		reply("F %s spawn %s: %d processes are running already, the most", id, f[F_FILE], CHILDREN_MAX);
		return;
	}
	for (int t = 0; t < 5; t++) {
		fds[t] = open_for_child(t, f[F_FD0 + t]);
		if (fds[t] == -1) {
			reply("F %s open fd %d %s: %s", id, t, f[F_FD0 + t], strerror(errno));
			goto out;
		}
	}
	if (posix_spawn_file_actions_init(&fa) != 0) {
		reply("F %s spawn %s: %s", id, f[F_FILE], strerror(ENOMEM));
		goto out;
	}
	for (int t = 0; t < 5 && err == 0; t++)
		if (fds[t] >= 0)
			err = posix_spawn_file_actions_adddup2(&fa, fds[t], t);
	if (err == 0 && strcmp(f[F_CWD], "-") != 0)
		err = posix_spawn_file_actions_addchdir_np(&fa, f[F_CWD]);
	/* A session of its own (the caller signals the whole group), every
	 * signal unblocked and at its default: nothing of ours leaks in. */
	sigemptyset(&none);
	/* Every bit, not sigfillset(): glibc's leaves out its two internal
	 * signals (32, 33), and its posix_spawn then leaves them ignored in
	 * the child, an ignore that exec keeps and a box would inherit. */
	memset(&all, 0xff, sizeof all);
	if (err == 0 && (err = posix_spawnattr_init(&attr)) == 0) {
		err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
							      POSIX_SPAWN_SETSIGDEF);
		if (err == 0)
			err = posix_spawnattr_setsigmask(&attr, &none);
		if (err == 0)
			err = posix_spawnattr_setsigdefault(&attr, &all);
		/* Returns when the child has exec'd (or failed to: its errno). */
		if (err == 0)
			err = posix_spawn(&pid, f[F_FILE], &fa, &attr, argv, envp);
		posix_spawnattr_destroy(&attr);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0) {
		reply("F %s spawn %s: %s", id, f[F_FILE], strerror(err));
		goto out;
	}
	children[nchildren].pid = pid;
	strcpy(children[nchildren].id, id); /* name_ok() bounded it to ID_MAX */
	nchildren++;
	reply("S %s %d", id, (int)pid);
out:
	for (int t = 0; t < 5; t++)
		if (fds[t] >= 0)
			close(fds[t]);
}

/* A request whose framing was sound. Nothing runs unless every field
 * checks out; each refusal is one line. */
static void handle(char *body, size_t n)
{
	if (n == 0 || body[n - 1] != '\0') {
		reply("E bad request: it must be NUL-terminated fields");
		return;
	}
	size_t nf = 0;
	for (size_t i = 0; i < n; i++)
		nf += body[i] == '\0';
	if (nf > FIELDS_MAX) {
		reply("E bad request: more than %u fields", FIELDS_MAX);
		return;
	}
	char **f = calloc(nf + 1, sizeof *f);
	if (!f) {
		reply("E bad request: %s", strerror(ENOMEM));
		return;
	}
	char *p = body;
	for (size_t i = 0; i < nf; i++) {
		f[i] = p;
		p += strlen(p) + 1;
	}
	const char *verb = nf > 0 ? f[0] : ""; /* nf > 0: the body ends with a NUL */
	if (strcmp(verb, "spawn") != 0)
		reply("E bad request: unknown verb '%.32s'", verb);
	else if (nf < 2 || !name_ok(f[F_ID], ID_MAX))
		reply("E bad request: the id must be 1 to %d of [A-Za-z0-9_.-]", ID_MAX);
	else {
		const char *id = f[F_ID], *bad = NULL;
		unsigned long long argc = 0, envc = 0;
		if (nf <= F_FILE)
			bad = "too few fields";
		for (int t = 0; !bad && t < 5; t++)
			if (!path_field_ok(f[F_FD0 + t]))
				bad = "a descriptor must be - or an absolute path";
		if (!bad && !path_field_ok(f[F_CWD]))
			bad = "cwd must be - or an absolute path";
		if (!bad && (parse_u64(f[F_ARGC], &argc) != 0 || argc < 1 || argc > nf))
			bad = "argc must be 1 or more, and no more than the fields";
		if (!bad && (parse_u64(f[F_ENVC], &envc) != 0 || envc > nf))
			bad = "envc must be a count no more than the fields";
		if (!bad && F_FILE + 1 + argc + envc != nf)
			bad = "argc and envc do not match the fields";
		if (!bad && f[F_FILE][0] == '\0')
			bad = "the file is empty";
		char **args = f + F_FILE + 1, **env = bad ? NULL : args + argc;
		for (unsigned long long i = 0; !bad && i < envc; i++)
			if (env[i][0] == '=' || !strchr(env[i], '='))
				bad = "an environment entry must be NAME=VALUE";
		/* argv and envp, each NULL-terminated, in one block. */
		char **vec = bad ? NULL : calloc(argc + envc + 2, sizeof *vec);
		if (!bad && !vec)
			bad = strerror(ENOMEM);
		if (bad)
			reply("F %s bad request: %s", id, bad);
		else {
			memcpy(vec, args, argc * sizeof *vec);
			memcpy(vec + argc + 1, env, envc * sizeof *vec);
			spawn_one(f, vec, vec + argc + 1);
		}
		free(vec);
	}
	free(f);
}

/* Collect every child that ended; one line each. */
static void reap(void)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (size_t i = 0; i < nchildren; i++) {
			if (children[i].pid != pid)
				continue;
			if (WIFSIGNALED(st))
				reply("X %s signal %d", children[i].id, WTERMSIG(st));
			else
				reply("X %s exit %d", children[i].id, WEXITSTATUS(st));
			children[i] = children[--nchildren];
			break;
		}
	}
}

/* The requests in in[0..*len): each whole one is handled and dropped.
 * -1 when the framing is broken (the rest cannot be found again). */
static int take_requests(char *in, size_t *len)
{
	size_t off = 0;
	for (;;) {
		char *nl = memchr(in + off, '\n', *len - off);
		size_t have = *len - off;
		if (!nl) {
			if (have > LENGTH_DIGITS_MAX) {
				reply("E bad length: more than %d digits", LENGTH_DIGITS_MAX);
				return -1;
			}
			break;
		}
		size_t digits = (size_t)(nl - (in + off));
		unsigned long long n = 0;
		*nl = '\0';
		if (digits > LENGTH_DIGITS_MAX || parse_u64(in + off, &n) != 0 || n > REQUEST_MAX) {
			reply("E bad length: it must be 0 to %u in decimal", REQUEST_MAX);
			return -1;
		}
		if (have < digits + 1 + n) {
			*nl = '\n';
			break;
		}
		handle(nl + 1, (size_t)n);
		off += digits + 1 + n;
	}
	memmove(in, in + off, *len - off);
	*len -= off;
	return 0;
}

/* Read what stdin has (one read: a long request never holds up the
 * reaping); 0 at end of input, -1 when the framing broke. */
static int read_requests(char *in, size_t *len)
{
	size_t room = LENGTH_DIGITS_MAX + 1 + REQUEST_MAX - *len;
	ssize_t n = room ? read(STDIN_FILENO, in + *len, room) : -1;
	if (n < 0 && room == 0) {
		reply("E bad length: a request longer than its length line");
		return -1;
	}
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0) {
		if (*len > 0) {
			reply("E cut short: the input ended inside a request");
			return -1;
		}
		return 0;
	}
	*len += (size_t)n;
	return take_requests(in, len) < 0 ? -1 : 1;
}

static int spawner_main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		die("sandbox", "kern spawner takes no arguments");
	/* It must not outlive the binding that started it; what it started
	 * lives on, as a child_process.spawn child would (kern's own
	 * --timeout is the backstop). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close_fds_except(NULL, 0);
	signal(SIGPIPE, SIG_IGN);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	/* The input buffer holds the length line and one whole request. */
	size_t cap = LENGTH_DIGITS_MAX + 1 + REQUEST_MAX, len = 0;
	char *in = malloc(cap + 1);
	children = calloc(CHILDREN_MAX, sizeof *children);
	if (sfd < 0)
		die_errno("sandbox", "spawner: signalfd");
	if (!in || !children)
		die("sandbox", "spawner: %s", strerror(ENOMEM));
	reply(GREETING);

	int reading = 1, status = 0;
	while (reading || nchildren > 0) {
		struct pollfd p[2] = {{sfd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
		if (poll(p, reading ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die_errno("sandbox", "spawner: poll");
		}
		if (p[0].revents) {
			struct signalfd_siginfo si[16];
			while (read(sfd, si, sizeof si) > 0)
				;
			reap();
		}
		if (reading && p[1].revents) {
			int r = read_requests(in, &len);
			if (r <= 0) {
				reading = 0;
				status = r < 0 ? EXIT_CLI : 0;
			}
		}
	}
	if (status != 0)
		fatal("sandbox", "spawner: its input broke the framing (the E line on stdout says how)");
	return status;
}

APPLET(spawner, "internal: start processes for the language bindings", usage, spawner_main);
