#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/parse.h"
#include "base/rmtree.h"
#include "base/xdg.h"
#include "box/box.h"
#include "state/records.h"

static const char *const children[] = {"instances", "claims", "scratch", "logs"};

/* private_dir() for a child of a runtime root just checked: only a
 * missing child is made, so a start looks at each with one lstat() (a
 * mkdir() that fails with EEXIST first was one more call each). */
static int private_child(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? private_dir(path) : -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		errno = S_ISLNK(st.st_mode) ? ELOOP : EPERM;
		return -1;
	}
	return (st.st_mode & 077) && chmod(path, 0700) < 0 ? -1 : 0;
}

/* The children of root; on failure, the one that failed is in sub. */
static int prepare_children(const char *root, char *sub, size_t len)
{
	for (size_t i = 0; i < sizeof children / sizeof children[0]; i++) {
		snprintf(sub, len, "%s/%s", root, children[i]);
		if (private_child(sub) < 0)
			return -1;
	}
	return 0;
}

int runtime_prepare(const char *root)
{
	char sub[PATH_MAX];
	if (private_dir(root) < 0) {
		setup_failed_errno("mkdir %s", root);
		return -1;
	}
	if (prepare_children(root, sub, sizeof sub) < 0) {
		setup_failed_errno("mkdir %s", sub);
		return -1;
	}
	return 0;
}

/* kern_dir() made and checked the root when this process first asked
 * (xdg.c probes once): only a root removed since then, which leaves its
 * children missing with it, goes through runtime_prepare() again. */
int runtime_root(char *out, size_t len)
{
	char sub[PATH_MAX];
	if (kern_dir(KDIR_RUNTIME, out, len, 1) < 0) {
		setup_failed_errno("cannot create kern's runtime directory");
		return -1;
	}
	if (prepare_children(out, sub, sizeof sub) == 0)
		return 0;
	if (errno == ENOENT)
		return runtime_prepare(out);
	setup_failed_errno("mkdir %s", sub);
	return -1;
}

int box_name_valid(const char *name)
{
	return name_ok(name, BOX_NAME_MAX);
}

/* Start time (field 22) and state (field 3) of pid; 0 when it is gone.
 * Our own comes from our thread's line (kern is one thread, so it is the
 * leader, with the process's start time): the process line of the
 * calling process adds up its threads' CPU time after bringing the
 * scheduler's account of it up to date, which has taken milliseconds, a
 * tenth of a box start, on a busy VM (not so for another process). */
static unsigned long long proc_stat(pid_t pid, char *state)
{
	char path[64], buf[1024];
	int fd;
	ssize_t n;
	*state = 0;
	if (pid == getpid())
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)pid);
	else
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: count fields after the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	*state = p[2];
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

unsigned long long proc_start_time(pid_t pid)
{
	char state;
	return proc_stat(pid, &state);
}

int record_live(const struct box_record *rec)
{
	char state;
	if (rec->sup_pid <= 1)
		return 0;
	unsigned long long st = proc_stat(rec->sup_pid, &state);
	/* A SIGKILLed supervisor its parent has not reaped yet is a zombie
	 * with the same start time: its box is gone all the same. */
	return st != 0 && st == rec->sup_start && state != 'Z' && state != 'X';
}

/* The record's text, composed in memory and written with one write(2)
 * (a stdio stream on the file itself cost an ioctl() and a write per
 * buffer). Composed in one static page while it fits, as nearly every
 * record does: a heap buffer (open_memstream) was a fresh page mapped and
 * unmapped again on each of the three writes of a start, a page fault and
 * a TLB flush each. Larger records (long --env-file values) grow on the
 * heap. */
struct text {
	char *p;
	size_t len, cap;
	int heap, failed;
};

static char text_page[4096] __attribute__((aligned(4096)));

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->failed)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap * 2;
		while (t->len + n + 1 > cap)
			cap *= 2;
		char *grown = t->heap ? realloc(t->p, cap) : malloc(cap);
		if (!grown) {
			t->failed = 1;
			return;
		}
		if (!t->heap)
			memcpy(grown, t->p, t->len);
		t->p = grown;
		t->cap = cap;
		t->heap = 1;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

static void text_free(struct text *t)
{
	if (t->heap)
		free(t->p);
}

/* Values are escaped like the .image sidecar: \\ \t \n. */
static void put(struct text *t, const char *key, const char *val)
{
	text_add(t, key, strlen(key));
	text_add(t, "\t", 1);
	for (const char *run = val;; val++) {
		const char *esc = *val == '\\' ? "\\\\" : *val == '\t' ? "\\t" : *val == '\n' ? "\\n" : NULL;
		if (!esc && *val)
			continue;
		text_add(t, run, (size_t)(val - run));
		if (!*val)
			break;
		text_add(t, esc, 2);
		run = val + 1;
	}
	text_add(t, "\n", 1);
}

/* 0, or -1 when out of memory (t is freed then). */
static int record_text(const struct box_record *rec, struct text *t)
{
	char num[64];
	*t = (struct text){.p = text_page, .cap = sizeof text_page};
	put(t, "name", rec->name);
	snprintf(num, sizeof num, "%d", (int)rec->sup_pid);
	put(t, "supervisor", num);
	snprintf(num, sizeof num, "%llu", rec->sup_start);
	put(t, "start", num);
	snprintf(num, sizeof num, "%d", (int)rec->pid1);
	put(t, "pid1", num);
	if (record_has_ns(rec)) {
		char list[BOX_NS_COUNT * 12] = "";
		for (int i = 0, at = 0; i < BOX_NS_COUNT; i++)
			at += snprintf(list + at, sizeof list - (size_t)at, "%s%d", i ? " " : "", rec->nsfd[i]);
		put(t, "nsfds", list);
	}
	snprintf(num, sizeof num, "%lld", rec->created);
	put(t, "created", num);
	put(t, "image", rec->image);
	put(t, "cgroup", rec->cgroup);
	put(t, "seccomp", rec->seccomp);
	snprintf(num, sizeof num, "%016" PRIx64, rec->caps);
	put(t, "caps", num);
	put(t, "user", rec->user);
	snprintf(num, sizeof num, "%d", rec->shifted);
	put(t, "shifted", num);
	snprintf(num, sizeof num, "%d", rec->restrict_sxid);
	put(t, "restrict_sxid", num);
	/* Only for a box without a user namespace: other records keep their bytes. */
	if (rec->no_userns)
		put(t, "userns", "no");
	if (rec->host_root)
		put(t, "workload_is_host_root", "1");
	put(t, "lower", rec->lower);
	put(t, "scratch", rec->scratch);
	snprintf(num, sizeof num, "%d", rec->byte1);
	put(t, "byte1", num);
	for (int i = 0; i < rec->nlabels; i++)
		put(t, "label", rec->labels[i]);
	put(t, "workdir", rec->workdir);
	put(t, "apparmor", rec->apparmor);
	for (int i = 0; i < rec->nulimits; i++)
		put(t, "ulimit", rec->ulimits[i]);
	/* "env" alone marks a known, possibly empty, environment. */
	if (rec->env) {
		put(t, "env", "");
		for (char **e = rec->env; *e; e++)
			put(t, "envvar", *e);
	}
	if (t->failed) {
		text_free(t);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int write_record(const char *runtime, const struct box_record *rec, char *tmp, size_t len)
{
	struct text text;
	if (record_text(rec, &text) < 0)
		return -1;
	snprintf(tmp, len, "%s/instances/.%s.%d.tmp", runtime, rec->name, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ok = fd >= 0 && write_all(fd, text.p, text.len) == 0;
	int e = errno;
	text_free(&text);
	if (fd >= 0 && close(fd) < 0 && ok) {
		ok = 0;
		e = errno;
	}
	if (!ok) {
		if (fd >= 0)
			unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

static void record_path(char *out, size_t len, const char *runtime, const char *name)
{
	snprintf(out, len, "%s/instances/%s", runtime, name);
}

/* The name lock, claims/NAME.lock, held with flock. Whoever holds it may
 * unlink it once the name has no record left (lock_drop), so the claims
 * directory does not grow with every name ever used. A waiter can then
 * wake up holding a file that is no longer the name's lock, while a newer
 * claimant holds the new one: after each flock it checks that the path
 * still names the file it locked, and starts over if not. Returns the
 * held descriptor, or -1 (errno). The paths live in these helpers' own
 * frames: the supervisor's teardown stack stays as shallow as before
 * (every page it touches is a fault per box). */
static void lock_path(char *out, size_t len, const char *runtime, const char *name)
{
	snprintf(out, len, "%s/claims/%s.lock", runtime, name);
}

static int lock_name(const char *runtime, const char *name)
{
	char lock[PATH_MAX];
	lock_path(lock, sizeof lock, runtime, name);
	for (;;) {
		struct stat held, named;
		int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX) < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (fstat(fd, &held) == 0 && lstat(lock, &named) == 0 && held.st_dev == named.st_dev &&
		    held.st_ino == named.st_ino)
			return fd;
		close(fd);
	}
}

/* Release the name lock; unlink it first (still holding it) when the
 * name has no record any more. */
static void lock_drop(const char *runtime, const char *name, int fd)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/instances/%s", runtime, name);
	if (lstat(path, &st) < 0 && errno == ENOENT) {
		lock_path(path, sizeof path, runtime, name);
		unlink(path);
	}
	close(fd);
}

int records_claim(const char *runtime, const struct box_record *rec)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int lfd, rc = 1;

	lfd = lock_name(runtime, rec->name);
	if (lfd < 0) {
		setup_failed_errno("lock %s/claims/%s.lock", runtime, rec->name);
		return EXIT_SETUP;
	}
	record_path(path, sizeof path, runtime, rec->name);
	int here = records_live_at(runtime, rec->name);
	/* A box recorded in another runtime directory (an older kern's
	 * /tmp/kern-<uid>) holds the name as well. */
	if (here == 1 || records_live_elsewhere(runtime, rec->name)) {
		fatal("box", "a box named '%s' is already running", rec->name);
		hint("pick another name, or stop it with `kern stop %s`", rec->name);
		goto out;
	}
	/* A dead, malformed or half-written leftover: only a dead writer leaves one. */
	if (here == 0)
		unlink(path);
	if (write_record(runtime, rec, tmp, sizeof tmp) < 0) {
		setup_failed_errno("write %s", tmp);
		rc = EXIT_SETUP;
		goto out;
	}
	/* link() fails with EEXIST if somebody else created it: O_EXCL semantics
	 * with the content already complete. */
	if (link(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		if (e == EEXIST) {
			fatal("box", "a box named '%s' is already running", rec->name);
		} else {
			setup_failed("link %s: %s", path, strerror(e));
			rc = EXIT_SETUP;
		}
		goto out;
	}
	unlink(tmp);
	rc = 0;
out:
	lock_drop(runtime, rec->name, lfd);
	return rc;
}

static int record_open(const char *runtime, const char *name);
static int record_read_is(int fd, const char *name, const struct box_record *sup);

/* still_ours() from the whole record. */
static int names_sup(const char *runtime, const struct box_record *rec)
{
	int fd = record_open(runtime, rec->name);
	return fd >= 0 && record_read_is(fd, rec->name, rec);
}

/* Whether the record of rec->name names rec's supervisor. Its head is
 * read first: write_record() puts name, supervisor and start there, so the
 * records this kern wrote answer from one open/read/close; anything else
 * (a record in another order, or not ours) is loaded whole and compared,
 * as every caller did before (a whole records_load() parses every line,
 * the environment's too, on each update and at teardown). */
static int still_ours(const char *runtime, const struct box_record *rec)
{
	char path[PATH_MAX], head[256], want[sizeof head];
	record_path(path, sizeof path, runtime, rec->name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int n = snprintf(want, sizeof want, "name\t%s\nsupervisor\t%d\nstart\t%llu\n", rec->name,
			 (int)rec->sup_pid, rec->sup_start);
	ssize_t got = read(fd, head, sizeof head);
	close(fd);
	if (n > 0 && (size_t)n < sizeof want && got >= n && memcmp(head, want, (size_t)n) == 0)
		return 1;
	return names_sup(runtime, rec);
}

int records_update(const char *runtime, const struct box_record *rec)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	if (!still_ours(runtime, rec))
		return -1;
	if (write_record(runtime, rec, tmp, sizeof tmp) < 0)
		return -1;
	record_path(path, sizeof path, runtime, rec->name);
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

void records_remove(const char *runtime, const struct box_record *rec)
{
	char path[PATH_MAX];
	/* Under the name lock, which goes with the record. Without the lock
	 * (it cannot be made) the record still goes. */
	int lfd = lock_name(runtime, rec->name);
	if (still_ours(runtime, rec)) {
		record_path(path, sizeof path, runtime, rec->name);
		unlink(path);
	}
	if (lfd >= 0)
		lock_drop(runtime, rec->name, lfd);
}

static int unescape(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		p++;
		if (*p == '\\')
			*o++ = '\\';
		else if (*p == 't')
			*o++ = '\t';
		else if (*p == 'n')
			*o++ = '\n';
		else
			return -1;
	}
	*o = 0;
	return 0;
}

#define COPY(field, v) snprintf(rec->field, sizeof rec->field, "%s", v)

/* Append one entry to the NULL-terminated rec->env. */
static int env_add(struct box_record *rec, size_t *n, const char *kv)
{
	char **grown = realloc(rec->env, (*n + 2) * sizeof *grown);
	if (!grown)
		return -1;
	rec->env = grown;
	if (!(rec->env[*n] = strdup(kv)))
		return -1;
	rec->env[++*n] = NULL;
	return 0;
}

/* Records hold --env-file values: lines are long, the whole is bounded. */
#define RECORD_MAX_BYTES (16 << 20)

int record_has_ns(const struct box_record *rec)
{
	for (int i = 0; i < BOX_NS_COUNT; i++)
		if (rec->nsfd[i] <= 2)
			return 0;
	return 1;
}

/* BOX_NS_COUNT descriptor numbers, each in 3..65535, one space apart;
 * anything else leaves the record without them. */
static void parse_nsfds(const char *v, struct box_record *rec)
{
	int fds[BOX_NS_COUNT];
	for (int i = 0; i < BOX_NS_COUNT; i++) {
		char *end;
		if (*v < '0' || *v > '9')
			return;
		long fd = strtol(v, &end, 10);
		if (fd < 3 || fd > 65535 || *end != (i == BOX_NS_COUNT - 1 ? '\0' : ' '))
			return;
		fds[i] = (int)fd;
		v = end + (*end == ' ');
	}
	memcpy(rec->nsfd, fds, sizeof fds);
}

/* instances/<name>, opened for reading; -1 with errno (ENOENT: none). */
static int record_open(const char *runtime, const char *name)
{
	char path[PATH_MAX];
	if (!box_name_valid(name)) {
		errno = EINVAL;
		return -1;
	}
	record_path(path, sizeof path, runtime, name);
	return open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* Parse the record open on fd (which it closes) into rec, zeroed first. */
static int record_read(int fd, const char *name, struct box_record *rec)
{
	char *line = NULL;
	size_t cap = 0, total = 0, nenv = 0;
	ssize_t n;
	int ok = 0;
	FILE *f;

	memset(rec, 0, sizeof *rec);
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -1;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		total += (size_t)n;
		if (total > RECORD_MAX_BYTES || line[n - 1] != '\n' || strlen(line) != (size_t)n)
			goto bad;
		line[n - 1] = 0;
		char *tab = strchr(line, '\t');
		if (!tab)
			goto bad;
		*tab = 0;
		char *v = tab + 1;
		if (unescape(v) < 0)
			goto bad;
		if (strcmp(line, "name") == 0) {
			COPY(name, v);
			ok |= 1;
		} else if (strcmp(line, "supervisor") == 0) {
			rec->sup_pid = (pid_t)strtol(v, NULL, 10);
			ok |= 2;
		} else if (strcmp(line, "start") == 0) {
			rec->sup_start = strtoull(v, NULL, 10);
			ok |= 4;
		} else if (strcmp(line, "pid1") == 0) {
			rec->pid1 = (pid_t)strtol(v, NULL, 10);
		} else if (strcmp(line, "nsfds") == 0) {
			parse_nsfds(v, rec);
		} else if (strcmp(line, "created") == 0) {
			rec->created = strtoll(v, NULL, 10);
		} else if (strcmp(line, "image") == 0) {
			COPY(image, v);
		} else if (strcmp(line, "cgroup") == 0) {
			COPY(cgroup, v);
		} else if (strcmp(line, "seccomp") == 0) {
			COPY(seccomp, v);
		} else if (strcmp(line, "caps") == 0) {
			rec->caps = strtoull(v, NULL, 16);
		} else if (strcmp(line, "user") == 0) {
			COPY(user, v);
		} else if (strcmp(line, "shifted") == 0) {
			rec->shifted = strcmp(v, "1") == 0;
		} else if (strcmp(line, "restrict_sxid") == 0) {
			rec->restrict_sxid = strcmp(v, "1") == 0;
		} else if (strcmp(line, "userns") == 0) {
			rec->no_userns = strcmp(v, "no") == 0;
		} else if (strcmp(line, "workload_is_host_root") == 0) {
			rec->host_root = strcmp(v, "1") == 0;
		} else if (strcmp(line, "lower") == 0) {
			COPY(lower, v);
		} else if (strcmp(line, "scratch") == 0) {
			COPY(scratch, v);
		} else if (strcmp(line, "byte1") == 0) {
			rec->byte1 = (int)strtol(v, NULL, 10);
		} else if (strcmp(line, "label") == 0 && rec->nlabels < RECORD_MAX_LABELS) {
			char *dup = strdup(v);
			if (dup)
				rec->labels[rec->nlabels++] = dup;
		} else if (strcmp(line, "workdir") == 0) {
			COPY(workdir, v);
		} else if (strcmp(line, "apparmor") == 0) {
			COPY(apparmor, v);
		} else if (strcmp(line, "ulimit") == 0) {
			char *dup = rec->nulimits < RECORD_MAX_ULIMITS ? strdup(v) : NULL;
			if (!dup)
				goto bad;
			rec->ulimits[rec->nulimits++] = dup;
		} else if (strcmp(line, "env") == 0 && !rec->env) {
			if (!(rec->env = calloc(1, sizeof *rec->env)))
				goto bad;
		} else if (strcmp(line, "envvar") == 0) {
			if (!rec->env || env_add(rec, &nenv, v) < 0)
				goto bad;
		}
	}
	free(line);
	fclose(f);
	if (ok != 7 || strcmp(rec->name, name) != 0) {
		record_free(rec);
		return -1;
	}
	return 0;
bad:
	free(line);
	fclose(f);
	record_free(rec);
	return -1;
}

int records_load(const char *runtime, const char *name, struct box_record *rec)
{
	int fd = record_open(runtime, name);
	if (fd < 0) {
		memset(rec, 0, sizeof *rec);
		return -1;
	}
	return record_read(fd, name, rec);
}

/* Whether the record of name read from fd (which it closes) names sup's
 * supervisor, or with sup NULL whether its box is live. Out of line: the
 * 15 KiB record lies on a stack frame of its own, which the usual answers
 * (no record file; a head that matches, still_ours()) never reach, and each
 * page of stack first reached is a page fault. */
static __attribute__((noinline)) int record_read_is(int fd, const char *name, const struct box_record *sup)
{
	struct box_record cur;
	if (record_read(fd, name, &cur) < 0)
		return 0;
	int is = sup ? cur.sup_pid == sup->sup_pid && cur.sup_start == sup->sup_start : record_live(&cur);
	record_free(&cur);
	return is;
}

int records_live_at(const char *runtime, const char *name)
{
	int fd = record_open(runtime, name);
	if (fd < 0)
		return errno == ENOENT || errno == EINVAL ? -1 : 0;
	return record_read_is(fd, name, NULL);
}

void record_free(struct box_record *rec)
{
	for (int i = 0; i < rec->nlabels; i++)
		free(rec->labels[i]);
	rec->nlabels = 0;
	for (int i = 0; i < rec->nulimits; i++)
		free(rec->ulimits[i]);
	rec->nulimits = 0;
	for (char **e = rec->env; e && *e; e++)
		free(*e);
	free(rec->env);
	rec->env = NULL;
}

/* Under the name lock, so a box claiming the name meanwhile is never hit. */
static void remove_dead(const char *runtime, const struct box_record *dead)
{
	char path[PATH_MAX];
	int lfd = lock_name(runtime, dead->name);
	if (lfd < 0)
		return;
	if (still_ours(runtime, dead)) {
		record_path(path, sizeof path, runtime, dead->name);
		unlink(path);
	}
	lock_drop(runtime, dead->name, lfd);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int records_each(const char *runtime, void (*fn)(const struct box_record *, void *), void *ctx)
{
	char dir[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	int live = 0;
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof dir, "%s/instances", runtime);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !box_name_valid(e->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **grown = realloc(names, cap * sizeof *names);
			if (!grown)
				break;
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n == 0) {
		free(names);
		return 0;
	}
	qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct box_record rec;
		if (records_load(runtime, names[i], &rec) == 0) {
			if (record_live(&rec)) {
				live++;
				if (fn)
					fn(&rec, ctx);
			} else {
				remove_dead(runtime, &rec);
			}
			record_free(&rec);
		}
		free(names[i]);
	}
	free(names);
	return live;
}

int scratch_path(const char *runtime, const char *name, char *out, size_t len)
{
	/* The answer for the last runtime asked about: a start asks twice
	 * (the record, then scratch_create()). */
	static char asked[PATH_MAX], root[PATH_MAX];
	struct statfs sf;
	if (strcmp(asked, runtime) != 0) {
		asked[0] = 0;
		snprintf(root, sizeof root, "%s/scratch", runtime);
		if (statfs(root, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC) {
			snprintf(root, sizeof root, "/dev/shm/kern-%u", (unsigned)geteuid());
			if (private_dir(root) < 0)
				return -1;
			strcat(root, "/scratch");
			if (private_dir(root) < 0)
				return -1;
		}
		snprintf(asked, sizeof asked, "%s", runtime);
	}
	snprintf(out, len, "%s/%s-%d", root, name, (int)getpid());
	return 0;
}

int scratch_create(const char *runtime, const char *name, int overlay, int upper_open,
		   const struct ns_ids *owner, char *out, size_t len)
{
	static const char *const subs[] = {"merged", "upper", "work"};
	char sub[PATH_MAX];
	if (scratch_path(runtime, name, out, len) < 0) {
		setup_failed_errno("no scratch directory off overlayfs");
		return -1;
	}
	if (mkdir(out, 0700) < 0) {
		setup_failed_errno("mkdir %s", out);
		return -1;
	}
	for (int i = 0; i < (overlay ? 3 : 1); i++) {
		snprintf(sub, sizeof sub, "%s/%s", out, subs[i]);
		mode_t mode = i == 1 && upper_open ? 0755 : 0700;
		/* chmod after mkdir: the umask must not narrow the upper's mode. */
		if (mkdir(sub, mode) < 0 || chmod(sub, mode) < 0) {
			setup_failed_errno("mkdir %s", sub);
			return -1;
		}
	}
	if (!owner)
		return 0;
	/* A shifted box's root owns scratch, the upper (its "/") and work
	 * (where the overlay, mounted by it, writes). */
	for (int i = -1; i < (overlay ? 3 : 0); i++) {
		if (i == 0)
			continue;
		snprintf(sub, sizeof sub, "%s%s%s", out, i < 0 ? "" : "/", i < 0 ? "" : subs[i]);
		if (lchown(sub, (uid_t)owner->ubase, (gid_t)owner->gbase) < 0) {
			setup_failed_errno("chown %s", sub);
			return -1;
		}
	}
	return 0;
}

int scratch_remove(const char *scratch)
{
	static const char *const subs[] = {"merged", "upper", "work"};
	char sub[PATH_MAX];
	/* What scratch_create() made, each empty once the box's mount
	 * namespace is gone (the writable layer was a tmpfs over it): four
	 * rmdir()s instead of a walk that opens and lists each directory. */
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
		snprintf(sub, sizeof sub, "%s/%s", scratch, subs[i]);
		if (rmdir(sub) < 0 && errno != ENOENT)
			return rmtree(scratch);
	}
	if (rmdir(scratch) == 0 || errno == ENOENT)
		return 0;
	/* Anything else (an uncapped layer on disk holds the box's files). */
	return rmtree(scratch);
}
