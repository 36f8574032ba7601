/* The chain steps' flag tables (lib/steps): for every step, a canonical
 * argv that uses each flag at least once (lists twice) parses and prints
 * back to itself, and bad input is refused with the right error. */
#include <stdlib.h>
#include <string.h>

#include "steps/steps.h"
#include "unit.h"

/* Storage for kern-fs's lists, which struct fs_config points to. */
static struct bind_spec binds[FS_STEP_MAX_ITEMS];
static struct tmpfs_spec tmpfs[FS_STEP_MAX_ITEMS];
static struct tmpfs_spec vdisks[FS_STEP_MAX_ITEMS];
static struct dev_spec devices[FS_STEP_MAX_ITEMS];

/* A config of t's step set to its defaults: a fresh buffer. */
static void *fresh(const struct flag_table *t)
{
	void *cfg = malloc(t->size);
	memcpy(cfg, t->defaults, t->size);
	if (t == &fs_step_flags) {
		struct fs_config *c = cfg;
		c->binds = binds;
		c->tmpfs = tmpfs;
		c->devices = devices;
		c->vdisks = vdisks;
	}
	return cfg;
}

static int count(const char *const *v)
{
	int n = 0;
	while (v[n])
		n++;
	return n;
}

/* from_argv(argv) stops at `--` (or the end) and to_argv() gives argv[1..]
 * back, word for word. */
static int round_trips(const struct flag_table *t, const char *const *words)
{
	int argc = count(words);
	void *cfg = fresh(t);
	struct flag_error e;
	struct strv out = {0};
	int ok = from_argv(t, argc, (char **)words, cfg, &e) == argc && to_argv(t, cfg, &out) == 0 &&
		 out.n == (size_t)argc - 1;
	for (size_t i = 0; ok && i < out.n; i++)
		if (strcmp(out.v[i], words[i + 1]) != 0) {
			fprintf(stderr, "%s: word %zu: printed '%s', parsed '%s'\n", t->step, i + 1,
				out.v[i], words[i + 1]);
			ok = 0;
		}
	if (!ok && out.n != (size_t)argc - 1)
		fprintf(stderr, "%s: %zu words printed for %d parsed (error %d '%s')\n", t->step,
			out.n, argc - 1, e.kind, e.arg ? e.arg : "");
	strv_free(&out);
	free(cfg);
	return ok;
}

/* from_argv refuses argv with error kind (and names word in it). */
static int refuses(const struct flag_table *t, enum flag_err kind, const char *word,
		   const char *const *words)
{
	void *cfg = fresh(t);
	struct flag_error e;
	char msg[600];
	int rc = from_argv(t, count(words), (char **)words, cfg, &e);
	free(cfg);
	if (rc != -1 || e.kind != kind)
		return 0;
	flag_error_text(&e, msg, sizeof msg);
	return strstr(msg, word) != NULL;
}

#define ARGV(...) ((const char *const[]){"step", __VA_ARGS__, NULL})

TEST(steps_cg_round_trip)
{
	CHECK(round_trips(&cg_step_flags, ARGV("--name", "b1", "--memory", "67108864", "--pids-limit",
					       "64", "--cpus", "0.5", "--require-limits", "--allow-uncapped",
					       "--cpuset", "0-1,3")));
	CHECK(round_trips(&cg_step_flags, ARGV("--name", "b1")));
	CHECK(round_trips(&cg_step_flags, ARGV("--name", "b1", "--cpus", "2")));
}

TEST(steps_cg_refuses)
{
	CHECK(refuses(&cg_step_flags, FLAG_BADVALUE, "invalid --memory 'lots'",
		      ARGV("--name", "b", "--memory", "lots", "--", "true")));
	CHECK(refuses(&cg_step_flags, FLAG_BADVALUE, "--memory", ARGV("--name", "b", "-m", "0")));
	CHECK(refuses(&cg_step_flags, FLAG_BADVALUE, "--pids-limit",
		      ARGV("--name", "b", "--pids-limit", "4194305")));
	CHECK(refuses(&cg_step_flags, FLAG_BADVALUE, "--cpus", ARGV("--name", "b", "--cpus", "0")));
	CHECK(refuses(&cg_step_flags, FLAG_BADVALUE, "--cpuset", ARGV("--name", "b", "--cpuset", "1-,")));
	CHECK(refuses(&cg_step_flags, FLAG_UNKNOWN, "unknown flag '--frob'", ARGV("--name", "b", "--frob")));
	CHECK(refuses(&cg_step_flags, FLAG_UNKNOWN, "'--require-limits=1'",
		      ARGV("--name", "b", "--require-limits=1")));
	CHECK(refuses(&cg_step_flags, FLAG_MISSING, "--name is required", ARGV("--memory", "1m", "--", "x")));
	CHECK(refuses(&cg_step_flags, FLAG_NOVALUE, "--name needs a value", ARGV("--name", "--", "x")));
	CHECK(refuses(&cg_step_flags, FLAG_EXTRA, "'stray'", ARGV("--name", "b", "stray")));
}

TEST(steps_cg_forms)
{
	/* --flag=value, the alias and a size suffix parse to the same config
	 * as the canonical words. */
	struct cg_step c = cg_step_defaults;
	struct flag_error e;
	CHECK(from_argv(&cg_step_flags, 6, (char **)ARGV("--name=b", "-m", "64m", "--cpus=1.50", "--"), &c,
			&e) == 5);
	CHECK(c.limits.memory == 64ULL << 20 && c.limits.memory_given && c.limits.cpu_micro == 1500000);
	CHECK_STR(c.name, "b");
	struct strv out = {0};
	CHECK(to_argv(&cg_step_flags, &c, &out) == 0 && out.n == 6);
	CHECK(out.n == 6 && !strcmp(out.v[3], "67108864") && !strcmp(out.v[5], "1.5"));
	strv_free(&out);
}

TEST(steps_egress)
{
	CHECK(round_trips(&egress_step_flags, ARGV("--allow", "a.example,b.example", "--name", "b1", "--fd", "9")));
	CHECK(round_trips(&egress_step_flags, ARGV("--fd", "3", "--attach")));
	CHECK(refuses(&egress_step_flags, FLAG_BADVALUE, "--fd", ARGV("--allow", "a.com", "--fd", "2", "--", "true")));
	CHECK(refuses(&egress_step_flags, FLAG_BADVALUE, "--name", ARGV("--name", "../x")));
	CHECK(refuses(&egress_step_flags, FLAG_UNKNOWN, "--bogus", ARGV("--allow", "a.com", "--bogus", "--", "true")));
	CHECK(refuses(&egress_step_flags, FLAG_NOVALUE, "--allow", ARGV("--allow")));
}

TEST(steps_ns)
{
	CHECK(round_trips(&ns_step_flags, ARGV("--net", "--uid-range", "--map-host-root", "--egress-fd", "9")));
	CHECK(round_trips(&ns_step_flags, ARGV("--uid-range-if-available", "--egress-fd", "0")));
	struct ns_step s = ns_step_defaults;
	struct ns_config nc = {0};
	struct flag_error e;
	CHECK(from_argv(&ns_step_flags, 2, (char **)ARGV("--uid-range"), &s, &e) == 2);
	ns_step_config(&s, &nc);
	CHECK(nc.range && nc.range_explicit && !nc.net_host && !nc.host_root);
	CHECK(refuses(&ns_step_flags, FLAG_BADVALUE, "--egress-fd", ARGV("--egress-fd", "x9")));
	CHECK(refuses(&ns_step_flags, FLAG_UNKNOWN, "--pid", ARGV("--pid", "--", "sh")));
}

TEST(steps_wait)
{
	CHECK(round_trips(&wait_step_flags,
			  ARGV("--name", "b1", "--runtime", "/run/kern", "--memory", "100663296", "--pids-limit",
			       "512", "--cpus", "0.25", "--require-limits", "--timeout", "30", "--image", "host",
			       "--lower", "/var/cache/kern/x", "--overlay", "--label", "a=b", "--label", "c=",
			       "--seccomp", "denylist", "--caps", "00000000a80425fb", "--user", "1000:1000",
			       "--tty", "--restrict-sxid")));
	CHECK(round_trips(&wait_step_flags, ARGV("--name", "b1", "--runtime", "/tmp/kern-0", "--allow-uncapped")));
	CHECK(refuses(&wait_step_flags, FLAG_BADVALUE, "--runtime", ARGV("--name", "b", "--runtime", "rel")));
	CHECK(refuses(&wait_step_flags, FLAG_BADVALUE, "--name", ARGV("--name", "-b", "--runtime", "/r")));
	CHECK(refuses(&wait_step_flags, FLAG_BADVALUE, "--label", ARGV("--label", "=v")));
	CHECK(refuses(&wait_step_flags, FLAG_BADVALUE, "--timeout", ARGV("--timeout", "0")));
	CHECK(refuses(&wait_step_flags, FLAG_BADVALUE, "--caps", ARGV("--caps", "xyz")));
	CHECK(refuses(&wait_step_flags, FLAG_MISSING, "--runtime", ARGV("--name", "b", "--", "x")));
}

TEST(steps_wait_labels_full)
{
	/* One label more than a record holds. */
	const char *v[2 + 2 * (RECORD_MAX_LABELS + 1) + 1];
	int n = 0;
	v[n++] = "kern-wait";
	for (int i = 0; i <= RECORD_MAX_LABELS; i++) {
		v[n++] = "--label";
		v[n++] = "k=v";
	}
	v[n] = NULL;
	CHECK(refuses(&wait_step_flags, FLAG_TOOMANY, "too many --label", v));
}

TEST(steps_fs)
{
	CHECK(round_trips(&fs_step_flags,
			  ARGV("--root", "overlay", "--lower", "/l", "--scratch", "/s", "--hostname", "h",
			       "--disk", "0", "--ro", "--rootless", "--net-host", "--tty", "--cgroup2", "--sysfs",
			       "--workdir", "/w", "--mount", "type=bind,src=/a,dst=/b",
			       "--mount", "type=bind,src=/c,dst=/d,ro", "--tmpfs", "/t:16777216",
			       "--tmpfs", "/run:0,mode=755,noexec,strictatime", "--tmpfs", "/vdisk/x:0", "--vdisk", "/vdisk/d:8388608", "--vdisk",
			       "/data:17592186044416", "--device", "/dev/null", "--device", "/dev/zero")));
	CHECK(round_trips(&fs_step_flags, ARGV("--root", "host", "--hostname", "h")));
	CHECK(round_trips(&fs_step_flags, ARGV("--root", "bind", "--lower", "/l", "--hostname", "h",
					       "--disk", "50331648")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "one of overlay, bind, host",
		      ARGV("--root", "tmpfs", "--hostname", "h")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--mount",
		      ARGV("--root", "host", "--hostname", "h", "--mount", "type=bind,src=/a,dst=/proc")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--tmpfs", ARGV("--tmpfs", "rel:1m")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--tmpfs", ARGV("--tmpfs", "/t:1m,mode=8")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--tmpfs", ARGV("--tmpfs", "/t:1m,exec")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "a vdisk takes PATH:SIZE only",
		      ARGV("--vdisk", "/d:8m,noexec")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--device", ARGV("--device", "null")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "from 1m to 16t", ARGV("--vdisk", "/d:0")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "from 1m to 16t", ARGV("--vdisk", "/d:512k")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "from 1m to 16t", ARGV("--vdisk", "/d:17t")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--vdisk", ARGV("--vdisk", "/proc/d:1m")));
	CHECK(refuses(&fs_step_flags, FLAG_TOOMANY, "--vdisk",
		      ARGV("--vdisk", "/a:1m", "--vdisk", "/b:1m", "--vdisk", "/c:1m", "--vdisk", "/d:1m",
			   "--vdisk", "/e:1m", "--vdisk", "/f:1m", "--vdisk", "/g:1m", "--vdisk", "/h:1m",
			   "--vdisk", "/i:1m")));
	CHECK(refuses(&fs_step_flags, FLAG_BADVALUE, "--disk", ARGV("--disk", "-1")));
	CHECK(refuses(&fs_step_flags, FLAG_MISSING, "--hostname", ARGV("--root", "host", "--", "x")));
	CHECK(refuses(&fs_step_flags, FLAG_UNKNOWN, "'--ro=yes'", ARGV("--ro=yes")));
}

TEST(steps_seccomp)
{
	/* --env and --env-file share one list and keep their order. */
	CHECK(round_trips(&seccomp_step_flags,
			  ARGV("--env", "A=1", "--env-file", "/proc/self/fd/3", "--env", "A=2", "--env-file",
			       "/e", "--caps", "0000000000000000", "--restrict-sxid", "--user", "nobody",
			       "--seccomp", "allowlist", "--ulimit", "nofile=64", "--ulimit", "core=0:0",
			       "--apparmor", "p", "--tty")));
	CHECK(round_trips(&seccomp_step_flags, ARGV("--seccomp", "allowlist-audit")));
	struct seccomp_step *c = fresh(&seccomp_step_flags);
	struct flag_error e;
	CHECK(from_argv(&seccomp_step_flags, 5, (char **)ARGV("--env-file", "/f", "--env", "K=V"), c, &e) == 5);
	CHECK(c->nenv == 2 && c->env_tag[0] == SECCOMP_ENV_FILE && c->env_tag[1] == SECCOMP_ENV_KV);
	CHECK(!c->caps_given && !c->seccomp_given && c->seccomp_mode == SECCOMP_ALLOWLIST);
	free(c);
	CHECK(refuses(&seccomp_step_flags, FLAG_BADVALUE, "--env", ARGV("--env", "NOEQUALS")));
	CHECK(refuses(&seccomp_step_flags, FLAG_BADVALUE, "--env", ARGV("--env", "=v")));
	CHECK(refuses(&seccomp_step_flags, FLAG_BADVALUE, "--ulimit", ARGV("--ulimit", "bogus=1")));
	CHECK(refuses(&seccomp_step_flags, FLAG_BADVALUE, "--seccomp", ARGV("--seccomp", "off")));
	CHECK(refuses(&seccomp_step_flags, FLAG_BADVALUE, "--caps", ARGV("--caps", "10000000000000000")));
	CHECK(refuses(&seccomp_step_flags, FLAG_NOVALUE, "--user", ARGV("--user", "--", "id")));
}

TEST(steps_pull_unpack)
{
	CHECK(round_trips(&pull_step_flags, ARGV("--platform", "linux/arm64", "--pull", "always", "--quiet",
						 "registry.example/a:1")));
	CHECK(round_trips(&pull_step_flags, ARGV("busybox")));
	CHECK(refuses(&pull_step_flags, FLAG_BADVALUE, "--pull", ARGV("--pull", "sometimes", "x")));
	CHECK(refuses(&pull_step_flags, FLAG_EXTRA, "'y'", ARGV("x", "y")));
	CHECK(refuses(&pull_step_flags, FLAG_NOVALUE, "--platform", ARGV("x", "--platform")));
	CHECK(round_trips(&unpack_step_flags, ARGV("--diff-id", "sha256:1", "--digest", "sha256:2", "-", "/d")));
	CHECK(refuses(&unpack_step_flags, FLAG_EXTRA, "'z'", ARGV("l", "d", "z")));
	CHECK(refuses(&unpack_step_flags, FLAG_UNKNOWN, "--bogus", ARGV("--bogus", "x", "y")));
}
