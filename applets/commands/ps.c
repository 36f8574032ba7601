/* kern ps: list the caller's running boxes (box-cli.md §7.2).
 *
 * Only boxes whose supervisor is alive with its recorded start time are
 * listed; a dead record found on the way is removed, so a SIGKILLed box
 * vanishes from the very next `kern ps`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/json.h"
#include "state/records.h"

static const char usage[] =
	"usage: kern ps [-q] [--filter name=NAME|label=KEY[=VALUE]]... [--json]\n"
	"\n"
	"List running boxes (yours: each user has their own).\n"
	"\n"
	"  -q, --quiet            names only, one per line\n"
	"  -f, --filter KEY=VAL   name=NAME: only the box named exactly NAME;\n"
	"                         label=KEY or label=KEY=VALUE: boxes with that label\n"
	"                         (repeatable: any of the names, all of the labels)\n"
	"  --json                 a JSON array of objects: name, status (\"running\"),\n"
	"                         labels, image, created, pid, pid1, seccomp, user,\n"
	"                         userns (false: a root box without a user namespace)\n"
	"\n"
	"Exit status: 0, or 1 for a usage error.\n";

#define MAX_FILTERS 32

struct ps {
	int quiet, json;
	const char *names[MAX_FILTERS];
	int nnames;
	const char *labels[MAX_FILTERS];
	int nlabels;
	struct box_record *rows;
	size_t n, cap;
	int oom;
};

static int has_label(const struct box_record *r, const char *want)
{
	size_t klen = strcspn(want, "=");
	for (int i = 0; i < r->nlabels; i++) {
		const char *l = r->labels[i];
		if (strncmp(l, want, klen) != 0 || l[klen] != '=')
			continue;
		if (!want[klen] || strcmp(l + klen + 1, want + klen + 1) == 0)
			return 1;
	}
	return 0;
}

/* As docker does: any of the names, all of the labels. */
static int wanted(const struct ps *p, const struct box_record *r)
{
	int named = p->nnames == 0;
	for (int i = 0; i < p->nnames && !named; i++)
		named = strcmp(r->name, p->names[i]) == 0;
	for (int i = 0; i < p->nlabels && named; i++)
		if (!has_label(r, p->labels[i]))
			return 0;
	return named;
}

/* records_each frees its record after the call: keep a copy. */
static void collect(const struct box_record *r, void *ctx)
{
	struct ps *p = ctx;
	if (!wanted(p, r) || p->oom)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct box_record *g = realloc(p->rows, cap * sizeof *g);
		if (!g) {
			p->oom = 1;
			return;
		}
		p->rows = g;
		p->cap = cap;
	}
	struct box_record *c = &p->rows[p->n];
	*c = *r;
	c->env = NULL;
	c->nulimits = 0;
	c->nlabels = 0;
	for (int i = 0; i < r->nlabels; i++)
		if ((c->labels[c->nlabels] = strdup(r->labels[i])))
			c->nlabels++;
	p->n++;
}

static int cmp_rows(const void *a, const void *b)
{
	return strcmp(((const struct box_record *)a)->name, ((const struct box_record *)b)->name);
}

/* A JSON string literal on stdout, whatever its length. */
static void put_json(const char *s)
{
	size_t cap = strlen(s) * 6 + 3;
	char *q = malloc(cap);
	if (q && json_quote(s, q, cap) >= 0)
		fputs(q, stdout);
	else
		fputs("\"\"", stdout);
	free(q);
}

static void print_json(const struct ps *p)
{
	fputs("[", stdout);
	for (size_t i = 0; i < p->n; i++) {
		const struct box_record *r = &p->rows[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		put_json(r->name);
		fputs(", \"status\": \"running\", \"labels\": {", stdout);
		for (int j = 0; j < r->nlabels; j++) {
			char *key = strdup(r->labels[j]);
			if (!key)
				continue;
			char *eq = strchr(key, '=');
			const char *val = eq ? eq + 1 : "";
			if (eq)
				*eq = 0;
			fputs(j ? ", " : "", stdout);
			put_json(key);
			fputs(": ", stdout);
			put_json(val);
			free(key);
		}
		fputs("}, \"image\": ", stdout);
		put_json(r->image);
		printf(", \"created\": %lld, \"pid\": %d, \"pid1\": %d, \"seccomp\": ", r->created,
		       (int)r->sup_pid, (int)r->pid1);
		put_json(r->seccomp);
		fputs(", \"user\": ", stdout);
		put_json(r->user);
		/* false: root's box without a user namespace (--userns=no), whose
		 * ids are the host's. */
		printf(", \"userns\": %s}", r->no_userns ? "false" : "true");
	}
	fputs(p->n ? "\n]\n" : "]\n", stdout);
}

static void age(long long created, char *out, size_t len)
{
	long long s = (long long)time(NULL) - created;
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(out, len, "%llds ago", s);
	else if (s < 7200)
		snprintf(out, len, "%lldm ago", s / 60);
	else if (s < 172800)
		snprintf(out, len, "%lldh ago", s / 3600);
	else
		snprintf(out, len, "%lldd ago", s / 86400);
}

static void print_table(const struct ps *p)
{
	int wn = 4, wi = 5;
	char when[32];
	for (size_t i = 0; i < p->n; i++) {
		int ln = (int)strlen(p->rows[i].name), li = (int)strlen(p->rows[i].image);
		wn = ln > wn ? ln : wn;
		wi = li > wi ? (li > 40 ? 40 : li) : wi;
	}
	printf("%-*s  %-*s  %-7s  %-9s  %s\n", wn, "NAME", wi, "IMAGE", "PID", "CREATED", "LABELS");
	for (size_t i = 0; i < p->n; i++) {
		const struct box_record *r = &p->rows[i];
		age(r->created, when, sizeof when);
		printf("%-*s  %-*.*s  %-7d  %-9s  ", wn, r->name, wi, wi, r->image, (int)r->sup_pid, when);
		for (int j = 0; j < r->nlabels; j++)
			printf("%s%s", j ? "," : "", r->labels[j]);
		putchar('\n');
	}
}

static int ps_main(int argc, char **argv)
{
	struct ps p = {0};
	for (int i = 1; i < argc; i++) {
		const char *t = argv[i], *v = NULL;
		if (!strcmp(t, "-q") || !strcmp(t, "--quiet")) {
			p.quiet = 1;
			continue;
		}
		if (!strcmp(t, "--json")) {
			p.json = 1;
			continue;
		}
		if (!strncmp(t, "--filter=", 9)) {
			v = t + 9;
		} else if (!strcmp(t, "--filter") || !strcmp(t, "-f")) {
			if (i + 1 >= argc)
				die("box", "flag '%s' needs a value", t);
			v = argv[++i];
		} else {
			if (t[0] == '-')
				fatal("box", "unknown flag '%s'", t);
			else
				fatal("box", "unexpected argument '%s'", t);
			die_hint("usage: kern ps [-q] [--filter name=NAME] [--json]");
		}
		if (!strncmp(v, "name=", 5) && p.nnames < MAX_FILTERS) {
			p.names[p.nnames++] = v + 5;
		} else if (!strncmp(v, "label=", 6) && v[6] && v[6] != '=' && p.nlabels < MAX_FILTERS) {
			p.labels[p.nlabels++] = v + 6;
		} else {
			die("box", "bad --filter '%s' (expected name=NAME or label=KEY[=VALUE])", v);
		}
	}
	if (p.quiet && p.json)
		die("box", "-q and --json are mutually exclusive");
	/* Every runtime directory that may hold our boxes (an older kern's
	 * /tmp/kern-<uid> too), listed as one, in name order. */
	records_each_all(collect, &p);
	if (p.n > 1)
		qsort(p.rows, p.n, sizeof *p.rows, cmp_rows);
	if (p.oom)
		die("box", "out of memory listing boxes");
	if (p.json)
		print_json(&p);
	else if (p.quiet)
		for (size_t i = 0; i < p.n; i++)
			printf("%s\n", p.rows[i].name);
	else
		print_table(&p);
	for (size_t i = 0; i < p.n; i++)
		record_free(&p.rows[i]);
	free(p.rows);
	return fflush(stdout) == 0 ? 0 : EXIT_CLI;
}

APPLET(ps, "list running boxes", usage, ps_main);
