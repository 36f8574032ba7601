/* kern-seccomp: the last step in PID 1. Build the box environment from
 * scratch, set rlimits, AppArmor, capabilities and the user, no_new_privs,
 * install the seccomp filter, close every other descriptor, fork the
 * workload and stay as its init. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/selfexec.h"
#include "base/strv.h"
#include "box/box.h"
#include "box/chain.h"
#include "box/envfile.h"
#include "box/init.h"
#include "box/ns.h"
#include "box/report.h"
#include "box/users.h"
#include "lockdown/lockdown.h"
#include "steps/steps.h"

static const char usage[] =
	"usage: kern-seccomp [options] -- CMD [ARG...]\n"
	"\n"
	"Lock this process down and run CMD as its child, in a session of its own,\n"
	"staying as init: reap every orphan, forward SIGTERM/INT/HUP/QUIT/USR1/USR2\n"
	"sent from outside the box, report how CMD ended. /proc/1/cmdline reads\n"
	"kern-init.\n"
	"\n"
	"  --env K=V            add to the environment (in order; later wins)\n"
	"  --env-file PATH      KEY=VALUE lines (/proc/self/fd/N for an inherited fd)\n"
	"  --caps HEX           the capability mask to keep (default: kern's 25)\n"
	"  --user SPEC          uid[:gid[:g1,g2]] or a name from this root's /etc/passwd\n"
	"  --seccomp MODE       allowlist (default), denylist, allowlist-audit\n"
	"  --ulimit NAME=SOFT[:HARD]   setrlimit (repeatable)\n"
	"  --apparmor PROFILE   enter a loaded AppArmor profile at exec\n"
	"  --tty                CMD's fds 0-2 and controlling terminal are a new pty\n"
	"                       of the box's /dev/pts; its master goes to kern-wait\n"
	"  --restrict-sxid      no setuid/setgid files and no CAP_SETFCAP (a root\n"
	"                       caller's box writing host files through idmapped binds)\n"
	"  --workload-is-host-root   without a user namespace, allow CMD to run as\n"
	"                       host uid 0 or gid 0 (still no capabilities)\n"
	"\n"
	"In the initial user namespace (after kern-ns --no-userns) the ids are the\n"
	"host's: every capability set is emptied whatever --caps says, no_new_privs\n"
	"is set, and CMD is refused (125) if it would run as uid or gid 0 without\n"
	"--workload-is-host-root, or if any capability is left.\n"
	"\n"
	"The environment starts empty but for PATH, HOME=/root, TERM=xterm and\n"
	"HOSTNAME. Setup failures exit 125; a command that cannot be started 126\n"
	"(not executable) or 127 (not found); otherwise CMD's status (128+N for a\n"
	"signal).\n";

static int seccomp_main(int argc, char **argv)
{
	static struct seccomp_step c;	/* large: the environment items */
	struct run_config rc = {0};
	struct strv env = {0};
	struct chain_fds ch;
	char host[65] = "", why[512];
	const char *bad;
	int next;

	chain_read(&ch);
	diag_status_fd = ch.status_fd;
	if (ch.has_caller_mask)
		init_caller_mask(&ch.caller_mask);
	c = seccomp_step_defaults;
	next = step_args(&seccomp_step_flags, argc, argv, &c) + 1;
	if (next >= argc)
		step_die(&seccomp_step_flags, "missing `-- CMD...`");
	gethostname(host, sizeof host - 1);
	if (env_defaults(&env, host) < 0)
		die_setup("out of memory");
	/* In order: a later entry wins. */
	for (int i = 0; i < c.nenv; i++) {
		const char *v = c.env[i];
		if (c.env_tag[i] == SECCOMP_ENV_KV) {
			if (env_put(&env, v) < 0)
				die_setup("out of memory");
			continue;
		}
		struct strv entries = {0};
		if (envfile_read(v, &entries, why, sizeof why) < 0)
			die_setup("--env-file: %s", why);
		for (size_t k = 0; k < entries.n; k++)
			if (env_put(&env, entries.v[k]) < 0)
				die_setup("out of memory");
		strv_free(&entries);
		/* A descriptor that carried secrets is not left for the box. */
		if (!strncmp(v, "/proc/self/fd/", 14))
			close((int)strtol(v + 14, NULL, 10));
	}
	rc.ld.caps = c.caps_given ? c.caps : caps_default();
	rc.ld.seccomp_mode = c.seccomp_mode;
	rc.ld.restrict_sxid = c.restrict_sxid;
	rc.ld.apparmor = c.apparmor;
	if (c.bpf) {
		struct sock_filter *prog;
		if (seccomp_prog_read(c.bpf, &prog, &rc.ld.extra_len) < 0)
			die_setup("--seccomp-bpf %s: %s (whole BPF instructions, 1 to 4096)", c.bpf, strerror(errno));
		rc.ld.extra_bpf = prog;
	}
	for (int i = 0; i < c.nulimits; i++)
		if (ulimit_parse(c.ulimits[i], &rc.ld.ulimits[rc.ld.nulimits++], &bad) < 0)
			die_setup("--ulimit %s: %s", c.ulimits[i], bad);
	rc.tty = c.tty;
	const char *user = c.user;
	if (user && user_parse_numeric(user, &rc.ld) < 0) {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (user_resolve(root, user, &rc.ld, why, sizeof why) < 0)
			die_setup("--user %s: %s", user, why);
		close(root);
	}
	if (rc.ld.user_set && (rc.ld.uid || rc.ld.gid))
		rc.ld.caps = 0;
	/* In the initial user namespace (kern-ns --no-userns) the ids and
	 * capabilities are the host's: none kept, and uid 0 is refused
	 * unless --workload-is-host-root. */
	rc.ld.host_ids = ns_initial_userns();
	rc.ld.host_root_ok = c.host_root;
	if (rc.ld.host_ids)
		rc.ld.caps = 0;
	rc.env = env.v;
	/* init overwrites this process's argv (/proc/1/cmdline): the command
	 * must live elsewhere. */
	struct strv cmd = {0};
	for (int i = next; i < argc; i++)
		if (strv_push(&cmd, argv[i]) < 0)
			die_setup("out of memory");
	rc.argv = cmd.v;
	init_run(&rc, ch.report_fd, env_fd("KERN_ALIVE_FD"));
}

APPLET(seccomp, "drop capabilities, set no_new_privs, install seccomp, run the workload", usage,
       seccomp_main);
