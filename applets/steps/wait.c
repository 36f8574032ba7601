/* kern-wait: the supervisor. Claims the box name, makes scratch, forks PID
 * 1 (which execs the rest of argv: kern-fs, then kern-seccomp), enforces
 * the deadline, reaps, tears down and writes the outcome bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/fdutil.h"
#include "base/rmtree.h"
#include "base/selfexec.h"
#include "box/chain.h"
#include "box/init.h"
#include "box/ns.h"
#include "box/pid1sync.h"
#include "box/supervise.h"
#include "cgroup/cgroup.h"
#include "state/records.h"
#include "steps/steps.h"

static const char usage[] =
	"usage: kern-wait --name NAME --runtime DIR [options] -- NEXT...\n"
	"\n"
	"Supervise a box: claim NAME in the registry under DIR, make the scratch\n"
	"directory, fork PID 1 (in the pid namespace kern-ns made) which execs NEXT,\n"
	"then wait: deadline, signal forwarding, OOM watch, reaping, teardown, the\n"
	"outcome bytes on KERN_STARTED_FD. Exits with the box's status.\n"
	"\n"
	"  --timeout N             SIGTERM the workload at N s, SIGKILL 2 s later\n"
	"  --memory SIZE, --pids-limit N, --cpus C, --require-limits, --allow-uncapped\n"
	"                          the limits kern-cg applied (to find and verify its cgroup)\n"
	"  --overlay               make upper/ and work/ in scratch for an overlay root\n"
	"  --tty                   relay the pty kern-seccomp --tty makes to this\n"
	"                          terminal (raw mode while the box runs)\n"
	"  --image REF, --label K=V, --seccomp MODE, --caps HEX, --user UID:GID,\n"
	"  --restrict-sxid, --workload-is-host-root\n"
	"                          recorded for `kern ps` and `kern exec`\n"
	"  --no-userns             root only, after kern-ns --no-userns: the box has no\n"
	"                          user namespace (recorded; upper/ is made 0755 for\n"
	"                          the workload's unprivileged host uid)\n"
	"  --lower DIR             the root's lower directory, recorded so that image\n"
	"                          garbage collection keeps it while the box runs\n"
	"\n"
	"PID 1 finds its status pipe, report socket, the caller's signal mask and\n"
	"scratch directory in KERN_PID1 (internal plumbing; never passed to the\n"
	"workload).\n"
	"\n"
	"With KERN_NS_DEFER from kern-ns (root, without --map-host-root) this\n"
	"process stays in the host's namespaces: it clones PID 1 into new ones,\n"
	"writes its id maps (box root a subordinate id), hands its egress listener\n"
	"to the proxy and makes the idmapped mounts kern-fs asks for.\n";

struct wait_args {
	struct wait_step c;
	struct box_record rec;
	char **next;
	/* KERN_NS_DEFER: the namespaces to clone PID 1 into (a shifted box),
	 * the start socket pair, the egress control descriptor. */
	int deferred;
	struct ns_config nc;
	int sync[2];
	int egress_ctl;
};

static void pid1_exec(void *ctx, int report_fd)
{
	struct wait_args *w = ctx;
	char scratch[4096];
	int idm = -1;
	snprintf(scratch, sizeof scratch, "%s", w->rec.scratch);
	if (w->deferred) {
		/* Box root first: an exec with an unmapped uid would drop every
		 * capability. kern-fs asks for its idmapped mounts on idm. */
		close(w->sync[0]);
		pid1sync_wait(w->sync[1], 1, w->egress_ctl >= 0);
		idm = w->sync[1];
		set_cloexec(idm, 0);
	}
	sigset_t caller;
	chain_export(diag_status_fd, report_fd, idm, init_caller_mask_get(&caller) ? &caller : NULL, scratch);
	exec_next(w->next);
	step_die_setup_errno(&wait_step_flags, "exec %s", w->next[0]);
}

/* KERN_NS_DEFER (ns.h), read and unset: 0, or 125 for a malformed one. */
static int read_defer(struct wait_args *w)
{
	const char *v = getenv(NS_DEFER_ENV);
	long f[4];
	char *end = NULL;
	w->deferred = 0;
	w->egress_ctl = -1;
	w->sync[0] = w->sync[1] = -1;
	if (!v)
		return 0;
	const char *p = v;
	int n = 0;
	for (; n < 4; n++) {
		f[n] = strtol(p, &end, 10);
		if (end == p || *end != (n < 3 ? ',' : 0) || (n < 3 && (f[n] < 0 || f[n] > 1)) ||
		    f[n] < -1 || f[n] > 1 << 20)
			break;
		p = end + 1;
	}
	if (n < 4 || geteuid() != 0)
		step_die_setup(&wait_step_flags, "bad %s '%.40s' (kern-ns of a root caller sets it)",
			       NS_DEFER_ENV, v);
	unsetenv(NS_DEFER_ENV);
	w->deferred = 1;
	w->nc = (struct ns_config){.net_host = f[0] != 0, .range = f[1] != 0,
				   .range_explicit = f[2] != 0};
	ns_root_ids(&w->nc.ids);
	ns_give_stdio(w->nc.ids.ubase, w->nc.ids.gbase);
	int fd = (int)f[3];
	w->egress_ctl = fd >= 0 && fcntl(fd, F_GETFD) >= 0 ? fd : -1;
	/* Only the supervisor talks to the proxy; PID 1 does not keep it. */
	if (w->egress_ctl >= 0)
		set_cloexec(w->egress_ctl, 1);
	return 0;
}

/* A shifted box's steps 9-11, from outside, once PID 1 exists (pid1sync.h). */
static int deferred_prepare(struct supervisor *s, pid_t pid1)
{
	struct wait_args *w = s->ctx;
	int ranged, rc;
	close(w->sync[1]);
	w->sync[1] = -1;
	if ((rc = ns_map(&w->nc, pid1, &ranged)))
		return rc;
	return pid1sync_serve(w->sync[0], pid1, &w->nc, w->egress_ctl >= 0, w->egress_ctl, s);
}

/* The record kern ps and kern exec read, from the flags. */
static void record_flags(struct wait_args *w)
{
	const struct wait_step *c = &w->c;
	snprintf(w->rec.image, sizeof w->rec.image, "%s", c->image ? c->image : "");
	snprintf(w->rec.lower, sizeof w->rec.lower, "%s", c->lower ? c->lower : "");
	snprintf(w->rec.seccomp, sizeof w->rec.seccomp, "%s", c->seccomp ? c->seccomp : "");
	snprintf(w->rec.user, sizeof w->rec.user, "%s", c->user ? c->user : "");
	w->rec.caps = c->caps;
	w->rec.restrict_sxid = c->restrict_sxid;
	w->rec.no_userns = c->no_userns;
	w->rec.host_root = c->host_root;
	for (int i = 0; i < c->nlabels; i++)
		w->rec.labels[i] = c->labels[i];
	w->rec.nlabels = c->nlabels;
}

static int wait_main(int argc, char **argv)
{
	static struct wait_args w;	/* large: the record */
	struct cg_box *cg = NULL;
	int next, rc;

	w.c = wait_step_defaults;
	next = step_args(&wait_step_flags, argc, argv, &w.c) + 1;
	if (next >= argc)
		step_die(&wait_step_flags, "missing `-- NEXT...`");
	record_flags(&w);
	w.next = argv + next;
	/* From kern-ns: the map it wrote. Never passed on to the box. */
	const char *map_env = getenv(NS_MAP_ENV);
	/* --no-userns only after kern-ns --no-userns: otherwise PID 1 would
	 * run in the host's pid namespace, or as a subordinate id. */
	if (w.c.no_userns && (geteuid() != 0 || !map_env || strcmp(map_env, "none") != 0))
		step_die_setup(&wait_step_flags, "--no-userns needs root and kern-ns --no-userns before it");
	if (!w.c.no_userns && map_env && !strcmp(map_env, "none"))
		step_die_setup(&wait_step_flags,
			       "kern-ns --no-userns made no user namespace: kern-wait needs --no-userns too");
	int range_wanted = map_env && strcmp(map_env, "single") != 0 && strcmp(map_env, "none") != 0;
	int silent_single = map_env && !strcmp(map_env, "single-silent");
	unsetenv(NS_MAP_ENV);
	if ((rc = read_defer(&w)))
		return rc;
	int started_fd = env_fd("KERN_STARTED_FD");
	if (started_fd >= 0)
		set_cloexec(started_fd, 1);

	if (runtime_prepare(w.c.runtime) < 0)
		return EXIT_SETUP;
	snprintf(w.rec.name, sizeof w.rec.name, "%s", w.c.name);
	w.rec.sup_pid = getpid();
	w.rec.sup_start = proc_start_time(w.rec.sup_pid);
	w.rec.created = (long long)time(NULL);
	if (scratch_path(w.c.runtime, w.c.name, w.rec.scratch, sizeof w.rec.scratch) < 0)
		die_setup_errno("no scratch directory off overlayfs");
	if ((rc = records_claim(w.c.runtime, &w.rec)))
		return rc;
	char scratch[4096];
	if (scratch_create(w.c.runtime, w.c.name, w.c.overlay,
			   range_wanted || w.rec.user[0] != 0 || (w.deferred && w.nc.range) || w.c.no_userns,
			   w.deferred ? &w.nc.ids : NULL, scratch, sizeof scratch) < 0 ||
	    cg_open(w.c.name, getpid(), &w.c.limits, &cg) < 0) {
		rmtree(w.rec.scratch);
		records_remove(w.c.runtime, &w.rec);
		return EXIT_SETUP;
	}
	w.rec.byte1 = cg_byte1(cg);
	snprintf(w.rec.cgroup, sizeof w.rec.cgroup, "%s", cg_record(cg));
	records_update(w.c.runtime, &w.rec);

	struct supervisor s = {.runtime = w.c.runtime, .rec = &w.rec, .scratch = w.rec.scratch,
			       .cg = cg, .timeout = w.c.timeout, .started_fd = started_fd,
			       .alive_fd = env_fd("KERN_ALIVE_FD"), .detach_fd = -1, .chain = 1,
			       .pid1 = pid1_exec, .ctx = &w, .tty = w.c.tty};
	if (w.deferred) {
		/* A shifted PID 1 cannot walk root's runtime directory to scratch;
		 * it inherits it as its working directory (fs_config). */
		w.rec.shifted = 1;
		records_update(w.c.runtime, &w.rec);
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w.sync) < 0 ||
		    chdir(scratch) < 0) {
			setup_failed("%s: %s", w.sync[0] < 0 ? "socketpair" : scratch, strerror(errno));
			cg_destroy(cg);
			rmtree(w.rec.scratch);
			records_remove(w.c.runtime, &w.rec);
			return EXIT_SETUP;
		}
		s.prepare = deferred_prepare;
		s.clone_flags = ns_flags(&w.nc);
	}
	rc = supervise(&s);
	if (silent_single && rc != 0 && rc != EXIT_SETUP)
		note("%s", single_map_note);
	return rc;
}

APPLET(wait, "supervise the box: PID 1, deadline, reaping, outcome bytes", usage, wait_main);
