/* kern recover: reclaim what dead boxes left behind (box-cli.md §7.2,
 * isolation.md §8.4): registry records, scratch directories, empty box
 * cgroups and, through the image cache's own interface, staging and
 * retired image copies. A supervisor killed with SIGKILL leaves these;
 * nothing that belongs to a live box is ever touched. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/parse.h"
#include "base/rmtree.h"
#include "base/xdg.h"
#include "box/ns.h"
#include "cgroup/cgroup.h"
#include "image/gc.h"
#include "state/boxproc.h"
#include "state/records.h"

static const char usage[] =
	"usage: kern recover\n"
	"\n"
	"Reclaim what boxes whose supervisor died (SIGKILL, a crash, a reboot of\n"
	"the user session) left behind: registry records, scratch directories,\n"
	"empty kern-box-* cgroups, and image cache staging and retired copies no\n"
	"live box uses. Running boxes are never touched. Safe to run at any time.\n"
	"\n"
	"Exit status: 0 (also when something could not be removed: a warning says\n"
	"what stays), 1 for a usage error.\n";

#define MAX_ENTRIES 65536

struct live {
	char **scratch;		/* scratch dirs of live boxes */
	size_t n, cap;
	int oom;
};

struct tally {
	int records, scratch, cgroups, kept;
};

static void add_live(const struct box_record *r, void *ctx)
{
	struct live *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		char **g = realloc(l->scratch, cap * sizeof *g);
		if (!g) {
			l->oom = 1;
			return;
		}
		l->scratch = g;
		l->cap = cap;
	}
	if ((l->scratch[l->n] = strdup(r->scratch)))
		l->n++;
	else
		l->oom = 1;
}

static int referenced(const struct live *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->scratch[i], path) == 0)
			return 1;
	return 0;
}

/* The names in dir (but . and ..), or NULL. Dot files are listed: a
 * record's temporary file is one. */
static char **list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d)) && *n < MAX_ENTRIES) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			char **g = realloc(v, cap * sizeof *g);
			if (!g)
				break;
			v = g;
		}
		if ((v[*n] = strdup(e->d_name)))
			(*n)++;
	}
	closedir(d);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* "<name>-<pid>": the pid, or 0 when the entry is not kern's. */
static pid_t scratch_pid(const char *entry)
{
	unsigned long long pid;
	const char *dash = strrchr(entry, '-');
	char name[128];
	if (!dash || dash == entry || (size_t)(dash - entry) >= sizeof name)
		return 0;
	snprintf(name, sizeof name, "%.*s", (int)(dash - entry), entry);
	if (!box_name_valid(name) || parse_u64(dash + 1, &pid) < 0 || pid < 2 || pid > INT_MAX)
		return 0;
	return (pid_t)pid;
}

/* The writer's pid in the temporary name of a record being written,
 * instances/.<name>.<pid>.tmp (lib/state/records.c), else 0. */
static pid_t record_tmp_pid(const char *entry)
{
	unsigned long long pid;
	size_t len = strlen(entry);
	char digits[32];
	if (entry[0] != '.' || len < 7 || strcmp(entry + len - 4, ".tmp") != 0)
		return 0;
	const char *dot = entry + len - 5;
	while (dot > entry && *dot != '.')
		dot--;
	size_t n = (size_t)(entry + len - 4 - (dot + 1));
	if (dot == entry || n == 0 || n >= sizeof digits)
		return 0;
	snprintf(digits, sizeof digits, "%.*s", (int)n, dot + 1);
	if (parse_u64(digits, &pid) < 0 || pid < 2 || pid > INT_MAX)
		return 0;
	return (pid_t)pid;
}

/* Wall-clock start of pid, in seconds, or -1 when it is gone. */
static long long proc_started_at(pid_t pid)
{
	unsigned long long ticks = proc_start_time(pid);
	char line[256];
	long long btime = -1;
	if (!ticks)
		return -1;
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "btime ", 6))
			btime = strtoll(line + 6, NULL, 10);
	fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	return btime < 0 || hz <= 0 ? -1 : btime + (long long)(ticks / (unsigned long long)hz);
}

/* The scratch owner is dead, or its pid now belongs to a process that
 * started after the directory was made (the pid was reused). */
static int owner_gone(pid_t pid, const struct stat *st)
{
	if (!proc_running(pid))
		return 1;
	long long started = proc_started_at(pid);
	return started < 0 || started > (long long)st->st_mtime + 1;
}

/* Files a range-mapped box wrote belong to subordinate ids the caller
 * cannot remove; inside a user namespace with the same range mapped the
 * caller is root over them. Returns 0 when path is gone. */
static int rmtree_mapped(const char *path)
{
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, 2);
		struct ns_config cfg = {.net_host = 1, .range = 1, .host_root = 1,
				       .uid = geteuid(), .gid = getegid()};
		int ranged = 0;
		if (ns_enter(&cfg, -1, &ranged) != 0 || !ranged)
			_exit(2);
		_exit(rmtree(path) == 0 ? 0 : 1);
	}
	int st;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Where recover looks: every runtime directory that may hold the caller's
 * boxes (kern_runtime_each: kern box's and an older kern's), and the
 * scratch roots scratch_path() may have picked for them: <runtime>/scratch,
 * and /dev/shm/kern-<uid>/scratch when a runtime is on overlayfs. That
 * last one is shared by every runtime root of this uid, so a directory
 * there may belong to a live box of a root not listed here: the owner pid
 * decides. */
#define MAX_RUNTIMES 8

struct places {
	char runtime[MAX_RUNTIMES][PATH_MAX];
	char scratch[MAX_RUNTIMES + 1][PATH_MAX];
	size_t nruntime, nscratch;
};

static void add_scratch(struct places *p, const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return;
	for (size_t i = 0; i < p->nscratch; i++)
		if (strcmp(p->scratch[i], dir) == 0)
			return;
	snprintf(p->scratch[p->nscratch++], PATH_MAX, "%s", dir);
}

static int add_runtime(const char *dir, void *ctx)
{
	struct places *p = ctx;
	char sub[PATH_MAX];
	if (p->nruntime == MAX_RUNTIMES || strlen(dir) + sizeof "/scratch" > PATH_MAX)
		return 0;
	snprintf(p->runtime[p->nruntime++], PATH_MAX, "%s", dir);
	snprintf(sub, sizeof sub, "%s/scratch", dir);
	add_scratch(p, sub);
	return 0;
}

static void reclaim_scratch(const char *dir, char **entries, size_t n, const struct live *live,
			    struct tally *t)
{
	char path[PATH_MAX];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		pid_t pid = scratch_pid(entries[i]);
		snprintf(path, sizeof path, "%s/%s", dir, entries[i]);
		if (!pid || referenced(live, path) ||
		    fstatat(dfd, entries[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !owner_gone(pid, &st))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dfd, entries[i], 0) == 0)
				t->scratch++;
			continue;
		}
		if (rmtree_at(dfd, entries[i]) == 0 || (geteuid() != 0 && rmtree_mapped(path) == 0)) {
			t->scratch++;
			continue;
		}
		t->kept++;
		warning("recover: cannot remove %s: %s%s", path, strerror(errno),
			geteuid() != 0 ? " (files of subordinate ids, and no uid range to map them "
					 "through newuidmap; remove it as root)" : "");
	}
	close(dfd);
}

/* How many of the records listed in runtime are gone now: those
 * records_each removed as dead, and the temporary records of dead
 * writers removed here. */
static int records_gone(const char *runtime, char **names, size_t n)
{
	char path[PATH_MAX];
	int gone = 0;
	for (size_t i = 0; names && i < n; i++) {
		struct stat st;
		pid_t writer = record_tmp_pid(names[i]);
		snprintf(path, sizeof path, "%s/instances/%s", runtime, names[i]);
		/* A dead record the live pass deleted; or the temporary file
		 * of a supervisor killed between writing a record and renaming
		 * it into place. */
		if ((box_name_valid(names[i]) && access(path, F_OK) < 0 && errno == ENOENT) ||
		    (writer && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && owner_gone(writer, &st) &&
		     unlink(path) == 0))
			gone++;
	}
	return gone;
}

static int recover_main(int argc, char **argv)
{
	static struct places pl;
	struct live live = {0};
	struct tally t = {0};
	char dir[PATH_MAX];
	char **recs[MAX_RUNTIMES] = {NULL}, **scr[MAX_RUNTIMES + 1] = {NULL};
	size_t nrec[MAX_RUNTIMES] = {0}, nscr[MAX_RUNTIMES + 1] = {0};

	(void)argv;
	if (argc > 1)
		die("box", "kern recover takes no arguments");
	kern_runtime_each(add_runtime, &pl);
	if (pl.nruntime) {
		snprintf(dir, sizeof dir, "/dev/shm/kern-%u/scratch", (unsigned)geteuid());
		add_scratch(&pl, dir);
	}
	const size_t nrt = pl.nruntime, nsd = pl.nscratch;
	/* Scratch is listed BEFORE the live records are read: a box claims
	 * its record before it makes its scratch, so any scratch seen here
	 * whose box is alive is in the lists read next. */
	for (size_t i = 0; i < nsd; i++)
		scr[i] = list_dir(pl.scratch[i], &nscr[i]);
	for (size_t r = 0; r < nrt; r++) {
		snprintf(dir, sizeof dir, "%s/instances", pl.runtime[r]);
		recs[r] = list_dir(dir, &nrec[r]);
	}
	for (size_t r = 0; r < nrt; r++)
		records_each(pl.runtime[r], add_live, &live);
	for (size_t r = 0; r < nrt; r++)
		t.records += records_gone(pl.runtime[r], recs[r], nrec[r]);
	for (size_t i = 0; i < nsd && !live.oom; i++)
		if (scr[i])
			reclaim_scratch(pl.scratch[i], scr[i], nscr[i], &live, &t);
	/* Egress: the proxy shares its listener over an inherited
	 * descriptor, so no socket file is left under <runtime>. */
	t.cgroups = cg_sweep_orphans(INT_MAX);
	if (t.cgroups < 0)
		t.cgroups = 0;
	/* The image cache's own sweep: staging and retired copies no live
	 * box uses (box-cli.md §7.2), exactly what `kern gc` removes. */
	image_gc();
	if (t.records || t.scratch || t.cgroups)
		note("recover: removed %d dead record%s, %d scratch director%s, %d cgroup%s", t.records,
		     t.records == 1 ? "" : "s", t.scratch, t.scratch == 1 ? "y" : "ies", t.cgroups,
		     t.cgroups == 1 ? "" : "s");
	for (size_t r = 0; r < nrt; r++)
		free_list(recs[r], nrec[r]);
	for (size_t i = 0; i < nsd; i++)
		free_list(scr[i], nscr[i]);
	free_list(live.scratch, live.n);
	return 0;
}

APPLET(recover, "reclaim what dead boxes left behind", usage, recover_main);
