/* The lines kern ends on (lib/base/diag.c): the exact bytes of box-cli.md
 * §6.2 on stderr, the status pipe's message, the alive pipe's `x`, and the
 * exit codes of §6.1. Each die case runs in a child whose stderr and alive
 * descriptor are pipes this test reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "unit.h"

/* Everything left in fd until EOF, NUL-terminated in buf. */
static size_t drain(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
	return n;
}

enum { DIE, DIE_ERRNO, DIE_HINT, DIE_SETUP, DIE_SETUP_ERRNO, DIE_SETUP_STATUS };

/* Runs case c in a child; returns its exit status, with its stderr in err,
 * what it wrote on its alive pipe in alive and on its status pipe in st. */
static int run(int c, char *err, char *alive, char *st, size_t len)
{
	int ep[2], ap[2], sp[2];
	if (pipe(ep) < 0 || pipe(ap) < 0 || pipe(sp) < 0)
		return -1;
	/* die() exits through exit(): nothing of ours may sit in its stdio. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(ep[1], 2);
		close(ep[0]);
		close(ap[0]);
		close(sp[0]);
		alive_remember(ap[1]);
		errno = ENOENT;
		switch (c) {
		case DIE:
			die("box", "bad flag '%s'", "--x\nerror: forged");
		case DIE_ERRNO:
			die_errno("image", "open %s", "/nope");
		case DIE_HINT:
			fatal("box", "missing box NAME");
			die_hint("kern exec %s -- CMD", "NAME");
		case DIE_SETUP:
			die_setup("mount %s", "/proc");
		case DIE_SETUP_ERRNO:
			die_setup_errno("mount %s", "/proc");
		default:
			diag_status_fd = sp[1];
			die_setup_errno("mount %s", "/proc");
		}
	}
	close(ep[1]);
	close(ap[1]);
	close(sp[1]);
	drain(ep[0], err, len);
	drain(ap[0], alive, len);
	drain(sp[0], st, len);
	int ws;
	if (waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws))
		return -1;
	return WEXITSTATUS(ws);
}

TEST(diag_die_is_the_fatal_line_then_exit_1)
{
	char err[512], alive[16], st[512];
	CHECK(run(DIE, err, alive, st, sizeof err) == EXIT_CLI);
	/* One line: a newline in the message cannot start a second one. */
	CHECK_STR(err, "error: box: bad flag '--x error: forged'\n");
	CHECK_STR(alive, "x");
	CHECK_STR(st, "");
	CHECK(run(DIE_ERRNO, err, alive, st, sizeof err) == EXIT_CLI);
	CHECK_STR(err, "error: image: open /nope: No such file or directory\n");
	CHECK_STR(alive, "x");
	CHECK(run(DIE_HINT, err, alive, st, sizeof err) == EXIT_CLI);
	CHECK_STR(err, "error: box: missing box NAME\nhint: kern exec NAME -- CMD\n");
	CHECK_STR(alive, "x");
}

TEST(diag_die_setup_is_the_setup_line_then_exit_125)
{
	char err[512], alive[16], st[512];
	CHECK(run(DIE_SETUP, err, alive, st, sizeof err) == EXIT_SETUP);
	CHECK_STR(err, "kern: sandbox setup failed: mount /proc\n");
	CHECK_STR(alive, "x");
	CHECK(run(DIE_SETUP_ERRNO, err, alive, st, sizeof err) == EXIT_SETUP);
	CHECK_STR(err, "kern: sandbox setup failed: mount /proc: No such file or directory\n");
	/* In PID 1 the line goes to the supervisor, not to stderr. */
	CHECK(run(DIE_SETUP_STATUS, err, alive, st, sizeof err) == EXIT_SETUP);
	CHECK_STR(err, "");
	CHECK_STR(st, "125 kern: sandbox setup failed: mount /proc: No such file or directory");
	CHECK_STR(alive, "x");
}

TEST(diag_status_messages)
{
	char buf[512];
	int p[2];
	CHECK(pipe(p) == 0);
	status_setup_failed(p[1], NULL, "fork PID 1: %s", "Resource temporarily unavailable");
	close(p[1]);
	drain(p[0], buf, sizeof buf);
	CHECK_STR(buf, "125 kern: sandbox setup failed: fork PID 1: Resource temporarily unavailable");

	CHECK(pipe(p) == 0);
	status_setup_failed(p[1], "mount -t proc proc /proc", "clone(%s): why\nnot", "X");
	close(p[1]);
	drain(p[0], buf, sizeof buf);
	CHECK_STR(buf, "125 kern: sandbox setup failed: clone(X): why not\nhint: mount -t proc proc /proc");

	CHECK(pipe(p) == 0);
	status_send(p[1], 137, "");
	status_setup_failed(-1, NULL, "nothing");
	close(p[1]);
	drain(p[0], buf, sizeof buf);
	CHECK_STR(buf, "137 ");
}

TEST(diag_errno_variants_keep_errno)
{
	int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(saved >= 0 && null >= 0);
	dup2(null, 2);
	errno = EACCES;
	fatal_errno("box", "open %s", "/x");
	CHECK(errno == EACCES);
	setup_failed_errno("open %s", "/x");
	CHECK(errno == EACCES);
	dup2(saved, 2);
	close(saved);
	close(null);
}

TEST(diag_alive_write_and_forget)
{
	char buf[16];
	int p[2];
	CHECK(pipe(p) == 0);
	alive_write(p[1], ALIVE_STARTED);
	alive_write(-1, ALIVE_FAILED);
	alive_remember(-1);
	alive_fail();
	alive_remember(p[1]);
	alive_fail();
	alive_remember(-1);
	close(p[1]);
	drain(p[0], buf, sizeof buf);
	CHECK_STR(buf, "Ax");
}
