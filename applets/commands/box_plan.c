/* kern box --plan: the configs launch() would run (box_resolve.c),
 * printed as the applet chain, one step per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/strv.h"
#include "base/xdg.h"

#include "box.h"

static void sh_word(const char *w)
{
	if (*w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_-./=:,@%+") == strlen(w)) {
		fputs(w, stdout);
		return;
	}
	putchar('\'');
	for (; *w; w++) {
		if (*w == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*w);
	}
	putchar('\'');
}

/* One step of the chain: HEAD, its flags as to_argv() prints its config,
 * and the `--` that leads to the next. */
static int print_step(const char *head, const struct flag_table *t, const void *cfg)
{
	struct strv w = {0};
	if (to_argv(t, cfg, &w) < 0) {
		strv_free(&w);
		setup_failed("%s: cannot print its flags (out of memory, or a value too long)", t->step);
		return -1;
	}
	fputs(head, stdout);
	for (size_t i = 0; i < w.n; i++) {
		putchar(' ');
		sh_word(w.v[i]);
	}
	fputs(" -- \\\n", stdout);
	strv_free(&w);
	return 0;
}

/* The configs launch() would run (resolve_steps), printed: the chain is
 * the box. Only what exists once a box runs differs: kern-egress's
 * control descriptor is PLAN_EGRESS_FD, the env files are opened at 3,
 * 4, ... and kern-seccomp reads them there. */
int box_plan(struct box_args *a)
{
	static struct launch l;	/* the image's lower dir, config and command */
	struct box_steps *st = &l.s;
	enum root_kind root = ROOT_OVERLAY;

	l.a = a;
	if (a->image && !strcmp(a->image, "host")) {
		root = ROOT_HOST;
	} else if (a->image) {
		/* --plan changes nothing: the image is read from the cache only. */
		if (image_resolve(a->image, PULL_PLAN, a->platform ? a->arch : NULL, l.lower,
				  sizeof l.lower, &l.icfg) < 0)
			die_reported();
	} else {
		root = rootfs_root(a, l.lower, sizeof l.lower);
	}
	if (kern_dir(KDIR_RUNTIME, l.runtime, sizeof l.runtime, 0) < 0)
		snprintf(l.runtime, sizeof l.runtime, "/tmp/kern-%u", (unsigned)geteuid());
	if (resolve_steps(&l, root) < 0)
		die_setup("out of memory, or more than %d environment entries", SECCOMP_STEP_MAX_ENV);
	/* On a pure cgroup v2 host the box gets the read-only cgroup2 view
	 * (kern box asks the cgroup it made). */
	struct statfs cgfs;
	st->fs.cgroup2 = statfs("/sys/fs/cgroup", &cgfs) == 0 && cgfs.f_type == CGROUP2_SUPER_MAGIC;

	printf("#!/bin/sh\n# kern box %s: the applet chain, one step per line\n", a->name);
	if (a->no_userns)
		printf("# no user namespace: the workload runs as uid %s with no capabilities\n",
		       st->rec_user[0] ? st->rec_user : "0:0 (--workload-is-host-root)");
	for (int i = 0; i < a->nenv_files; i++) {
		printf("exec %d<", 3 + i);
		sh_word(a->env_files[i]);
		printf("\n");
	}
	if (print_step("exec kern-cg", &cg_step_flags, &st->cg) < 0 ||
	    (st->egress && print_step("  kern-egress", &egress_step_flags, &st->eg) < 0) ||
	    print_step("  kern-ns", &ns_step_flags, &st->ns) < 0 ||
	    print_step("  kern-wait", &wait_step_flags, &st->wait) < 0 ||
	    print_step("  kern-fs", &fs_step_flags, &st->fs) < 0 ||
	    print_step("  kern-seccomp", &seccomp_step_flags, &st->sc) < 0)
		return EXIT_SETUP;
	putchar(' ');
	for (size_t i = 0; i < l.argv.n; i++) {
		putchar(' ');
		sh_word(l.argv.v[i]);
	}
	printf("\n");
	return 0;
}
