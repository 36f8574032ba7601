/* kern stop: stop running boxes (box-cli.md §7.2, isolation.md §8.2).
 *
 * The stop signal goes to the workload (through kern's init for the
 * signals init forwards, directly otherwise); after the grace, which is
 * skipped when the workload does not catch the signal, PID 1 and every
 * task of the box cgroup get SIGKILL; then kern waits up to 1 s for the
 * supervisor to finish its teardown. Every process is reached through a
 * pidfd whose identity was proved first (start time, parentage), so a
 * recycled pid is never signalled. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/clock.h"
#include "base/diag.h"
#include "base/parse.h"
#include "box/init.h"
#include "cgroup/cgroup.h"
#include "state/boxproc.h"
#include "state/records.h"

static const char usage[] =
	"usage: kern stop [--stop-signal SIG] [--stop-timeout N] NAME...\n"
	"\n"
	"Stop running boxes: send SIG to the workload, wait up to N seconds for the\n"
	"box to end, then kill every process in it. The wait is skipped when the\n"
	"workload does not catch SIG (a box still starting gets the whole wait).\n"
	"\n"
	"  -s, --stop-signal SIG  TERM (default), INT, HUP, USR1, ... or a number\n"
	"  -t, --stop-timeout N   grace in whole seconds (default 10; 0 kills at once)\n"
	"\n"
	"Exit status: 0 when every box was stopped, 1 when a NAME is not running or\n"
	"for a usage error.\n";

/* When the workload does not catch the signal its default action ends it
 * within moments; give it that long to exit by the signal itself. */
#define UNCAUGHT_WAIT_MS 200
/* How long a box may take between its record and its PID 1. */
#define SETUP_WAIT_MS 2000
/* The supervisor's teardown after PID 1 died: normally milliseconds; a
 * loaded host or a large memory cgroup to release can take seconds, and
 * callers expect the box to be gone (cgroup, scratch, record) on return. */
#define TEARDOWN_WAIT_MS 10000

static int parse_signal(const char *s)
{
	unsigned long long n;
	if (parse_u64(s, &n) == 0)
		return n >= 1 && n < (unsigned long long)NSIG ? (int)n : -1;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcasecmp(s, abbrev))
			return sig;
	}
	return -1;
}

static int forwarded_by_init(int sig)
{
	for (size_t i = 0; i < sizeof init_forwarded / sizeof init_forwarded[0]; i++)
		if (init_forwarded[i] == sig)
			return 1;
	return 0;
}

/* Reported, and the other names are still stopped: -1. */
static int unknown(const char *name)
{
	fatal("box", "no running box named '%s'", name);
	hint("`kern ps` lists the running boxes");
	return -1;
}

/* Load name's record and prove its processes; while the box is still
 * between its record and PID 1, wait for PID 1 a little. */
static int find_box(const char *runtime, const char *name, struct box_record *rec, struct box_procs *bp)
{
	for (long waited = 0;; waited += 5) {
		if (records_load(runtime, name, rec) < 0)
			return -1;
		if (box_procs_open(rec, bp) < 0) {
			record_free(rec);
			return -1;
		}
		if (rec->pid1 > 0 || waited >= SETUP_WAIT_MS)
			return 0;
		box_procs_close(bp);
		record_free(rec);
		sleep_ms(5);
	}
}

static void kill_box(struct box_procs *bp, const struct box_record *rec)
{
	struct cg_box *cg = NULL;
	/* PID 1's death tears down the pid namespace; the cgroup sweep catches
	 * anything charged to the box outside it. */
	pidfd_signal(bp->pid1_fd, SIGKILL);
	if (rec->cgroup[0] && cg_open_record(rec->cgroup, &cg) == 0 && cg) {
		cg_kill_all(cg);
		cg_close(cg);
	}
}

static int stop_one(const char *name, int sig, long grace_ms)
{
	struct box_record rec;
	struct box_procs bp;
	char runtime[4096];

	/* The runtime directory that records it: kern box's, or another
	 * candidate an older kern used (state/runtime_dirs.c). */
	if (records_find(name, runtime, sizeof runtime) < 0 || find_box(runtime, name, &rec, &bp) < 0)
		return unknown(name);
	if (bp.pid1_fd < 0) {
		if (rec.pid1 == 0 && proc_is_kern(rec.sup_pid) && !pidfd_exited(bp.sup_fd)) {
			/* Stuck in setup with no PID 1 yet: only the supervisor
			 * exists; its death takes the half-built box with it and
			 * `kern recover` reclaims the rest. */
			pidfd_signal(bp.sup_fd, SIGKILL);
		}
		/* Otherwise PID 1 is gone already and the supervisor is
		 * tearing down: nothing left to signal. */
	} else {
		/* No workload yet (the box is still starting): init holds a
		 * signal it forwards until the workload runs, which may catch
		 * it, so the grace is the workload's whole. */
		int forwarded = forwarded_by_init(sig);
		int caught = bp.work > 0 ? proc_catches(bp.work, sig) : forwarded;
		if (forwarded)
			pidfd_signal(bp.pid1_fd, sig);
		else
			pidfd_signal(bp.work_fd, sig);
		long wait = caught ? grace_ms : (grace_ms < UNCAUGHT_WAIT_MS ? grace_ms : UNCAUGHT_WAIT_MS);
		if (!pidfd_wait_exit(bp.pid1_fd, (int)wait))
			kill_box(&bp, &rec);
	}
	/* Wait only for a real kern supervisor: a record whose pid now
	 * belongs to another program was never signalled and has no
	 * teardown to finish. */
	if (proc_is_kern(rec.sup_pid) && !pidfd_wait_exit(bp.sup_fd, TEARDOWN_WAIT_MS))
		warning("box '%s' was killed; its supervisor (pid %d) is still tearing it down", name,
			(int)rec.sup_pid);
	box_procs_close(&bp);
	record_free(&rec);
	return 0;
}

static int stop_main(int argc, char **argv)
{
	const char *names[256];
	int nnames = 0, sig = SIGTERM, rc = 0;
	unsigned long long grace = 10;

	for (int i = 1; i < argc; i++) {
		char *t = argv[i], *v = NULL, *eq = strchr(t, '=');
		int is_sig = 0, is_time = 0;
		size_t flen = eq && t[1] == '-' ? (size_t)(eq - t) : strlen(t);
		if ((flen == 13 && !strncmp(t, "--stop-signal", flen)) || !strcmp(t, "-s"))
			is_sig = 1;
		else if ((flen == 14 && !strncmp(t, "--stop-timeout", flen)) || !strcmp(t, "-t"))
			is_time = 1;
		if (is_sig || is_time) {
			if (eq && t[1] == '-') {
				v = eq + 1;
			} else if (i + 1 < argc) {
				v = argv[++i];
			} else {
				die("box", "flag '%.*s' needs a value", (int)flen, t);
			}
			if (is_sig && (sig = parse_signal(v)) < 0)
				die("box", "bad --stop-signal '%s' (a signal name such as TERM, or a number)", v);
			if (is_time && (parse_u64(v, &grace) < 0 || grace > 86400))
				die("box", "bad --stop-timeout '%s' (whole seconds, 0 to 86400)", v);
			continue;
		}
		if (t[0] == '-')
			die("box", "unknown flag '%.*s'", (int)flen, t);
		if (!box_name_valid(t))
			die("box", "bad box name '%s'", t);
		if (nnames == (int)(sizeof names / sizeof names[0]))
			die("box", "too many names");
		names[nnames++] = t;
	}
	if (nnames == 0) {
		fatal("box", "missing box NAME");
		die_hint("usage: kern stop [--stop-signal SIG] [--stop-timeout N] NAME...");
	}
	/* Dead records go now (box-cli.md §7.1). */
	records_each_all(NULL, NULL);
	for (int i = 0; i < nnames; i++)
		if (stop_one(names[i], sig, (long)grace * 1000) < 0)
			rc = EXIT_CLI;
	return rc;
}

APPLET(stop, "stop a running box", usage, stop_main);
