/* Capabilities (isolation.md §5), --ulimit parsing (box-cli.md §2.1, flags
 * clients send) and lockdown_apply() in forked children (it changes the
 * calling process for good, filter included). */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockdown/lockdown.h"
#include "unit.h"

static int popcount(uint64_t v)
{
	int n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

TEST(caps_default_is_the_25_of_isolation_md)
{
	CHECK(caps_default() == 0x00000110bd84efffULL);
	CHECK(popcount(caps_default()) == 25);
	/* The 16 dropped by default. */
	static const int dropped[] = {12, 16, 17, 19, 20, 21, 22, 25, 30, 32, 33, 34, 35, 37, 38, 39};
	for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++)
		CHECK(!(caps_default() & (1ULL << dropped[i])));
	/* Nothing above 40, now or on later kernels. */
	CHECK((caps_default() >> 41) == 0);
}

TEST(caps_adjust_drop_all_then_dockers_14)
{
	char *drop[] = {"ALL"};
	char *add[] = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
		       "NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"};
	uint64_t c = caps_default();
	const char *bad = NULL;
	CHECK(caps_adjust(&c, drop, 1, NULL, 0, &bad) == 0 && c == 0);
	c = caps_default();
	CHECK(caps_adjust(&c, drop, 1, add, 14, &bad) == 0);
	CHECK(c == 0x00000000a80425fbULL);
}

TEST(caps_adjust_names_are_case_insensitive_with_or_without_prefix)
{
	char *drop[] = {"cap_net_raw", "Chown", "all"};
	char *add[] = {"CAP_SYS_ADMIN", "net_admin"};
	uint64_t c = caps_default();
	const char *bad = NULL;
	CHECK(caps_adjust(&c, drop, 2, NULL, 0, &bad) == 0);
	CHECK(c == (caps_default() & ~((1ULL << 13) | 1ULL)));
	c = 0;
	CHECK(caps_adjust(&c, NULL, 0, add, 2, &bad) == 0 && c == ((1ULL << 21) | (1ULL << 12)));
	/* drop ALL wins over earlier drops; add is applied after every drop */
	c = caps_default();
	CHECK(caps_adjust(&c, drop, 3, add, 1, &bad) == 0 && c == (1ULL << 21));
}

TEST(caps_adjust_refuses_unknown_names_and_changes_nothing)
{
	char *drop[] = {"NET_RAW", "NOT_A_CAP"};
	char *add[] = {"12"};
	char *add2[] = {""};
	uint64_t c = caps_default();
	const char *bad = NULL;
	CHECK(caps_adjust(&c, drop, 2, NULL, 0, &bad) == -1);
	CHECK(bad && strcmp(bad, "NOT_A_CAP") == 0);
	CHECK(c == caps_default());
	CHECK(caps_adjust(&c, NULL, 0, add, 1, &bad) == -1 && strcmp(bad, "12") == 0);
	CHECK(caps_adjust(&c, NULL, 0, add2, 1, &bad) == -1);
	CHECK(c == caps_default());
	char *all[] = {"aLl"};
	CHECK(caps_adjust(&c, NULL, 0, all, 1, &bad) == 0 && c == ~0ULL);
}

TEST(ulimit_parse_accepts_the_grammar)
{
	struct ulimit_spec u;
	const char *why = NULL;
	CHECK(ulimit_parse("nofile=1024:524288", &u, &why) == 0);
	CHECK(u.resource == RLIMIT_NOFILE && u.soft == 1024 && u.hard == 524288);
	CHECK(ulimit_parse("core=0", &u, &why) == 0 && u.soft == 0 && u.hard == 0);
	CHECK(ulimit_parse("stack=8388608:unlimited", &u, &why) == 0);
	CHECK(u.resource == RLIMIT_STACK && u.soft == 8388608 && u.hard == RLIM_INFINITY);
	CHECK(ulimit_parse("memlock=infinity:-1", &u, &why) == 0);
	CHECK(u.soft == RLIM_INFINITY && u.hard == RLIM_INFINITY);
	static const char *const names[] = {"core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue",
					    "nice", "nofile", "nproc", "rss", "rtprio", "rttime",
					    "sigpending", "stack"};
	for (size_t i = 0; i < 15; i++) {
		char s[64];
		snprintf(s, sizeof s, "%s=1:2", names[i]);
		CHECK(ulimit_parse(s, &u, &why) == 0);
	}
}

TEST(ulimit_parse_refuses_bad_input)
{
	struct ulimit_spec u;
	const char *why = NULL;
	static const char *const bad[] = {
		"nofile=2048:1024", "nofile=unlimited:1024", "nofile", "nofile=", "=1", "nofile=1:",
		"nofile=:1", "nofile=1:2:3", "nofile=-2", "nofile=0x10", "nofile= 1", "NOFILE=1",
		"files=1", "nofile=1k", "nofile=18446744073709551615", "nofile=99999999999999999999",
		"nofile=1;2", "",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		CHECK(ulimit_parse(bad[i], &u, &why) == -1);
		CHECK(why != NULL);
	}
	CHECK(ulimit_parse("nofile=2048:1024", &u, &why) == -1 && strstr(why, "soft"));
}

/* lockdown_apply in a child: returns its exit status, or 200 + n for a
 * post-condition n that failed. */
static int in_child(const struct lockdown *ld, int for_exec)
{
	int devnull = open("/dev/null", O_WRONLY);
	pid_t p = fork();
	if (p == 0) {
		dup2(devnull, 2);	/* the refusal line is expected */
		int rc = lockdown_apply(ld, for_exec);
		if (rc != 0)
			_exit(seccomp_installed() ? 204 : rc);	/* a refusal leaves no filter */
		if (!seccomp_installed())
			_exit(201);
		if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
			_exit(202);
		/* A killed call now ends this child with SIGSYS. */
		if (ld->seccomp_mode == SECCOMP_ALLOWLIST && syscall(425, 0, 0) != -1)
			_exit(203);
		_exit(0);
	}
	int st = 0;
	waitpid(p, &st, 0);
	close(devnull);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(lockdown_apply_installs_the_filter_and_no_new_privs)
{
	struct lockdown ld = {.caps = caps_default(), .seccomp_mode = SECCOMP_ALLOWLIST};
	if (geteuid() != 0) {
		printf("# skip: needs root (capability changes)\n");
		return;
	}
	for (int m = 0; m < 3; m++) {
		ld.seccomp_mode = m;
		CHECK(in_child(&ld, 0) == 0);
	}
}

TEST(seccomp_installed_is_false_without_a_filter)
{
	CHECK(!seccomp_installed());
}

TEST(lockdown_apply_refuses_125_or_126_and_installs_nothing)
{
	struct lockdown ld = {.caps = caps_default(), .seccomp_mode = SECCOMP_ALLOWLIST};
	/* This host has no AppArmor: fail closed. */
	ld.apparmor = "kern-test-profile";
	CHECK(in_child(&ld, 0) == 125);
	CHECK(in_child(&ld, 1) == 126);
	ld.apparmor = "../etc";
	CHECK(in_child(&ld, 0) == 125);
	ld.apparmor = NULL;
	ld.seccomp_mode = 9;
	CHECK(in_child(&ld, 0) == 125);
	ld.seccomp_mode = SECCOMP_ALLOWLIST;
	/* The kernel refuses to raise a hard limit for an unprivileged
	 * process; for root use a soft limit above the hard one's ceiling. */
	struct rlimit cur;
	getrlimit(RLIMIT_NOFILE, &cur);
	ld.nulimits = 1;
	ld.ulimits[0].resource = RLIMIT_NOFILE;
	ld.ulimits[0].soft = ld.ulimits[0].hard = (rlim_t)1 << 40;	/* above fs.nr_open */
	CHECK(in_child(&ld, 0) == 125);
}
