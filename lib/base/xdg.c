#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/xdg.h"

static const char *abs_env(const char *name)
{
	const char *v = getenv(name);
	return (v && v[0] == '/') ? v : NULL;
}

/* Without $HOME, the euid's home from /etc/passwd. Read with fgetpwent(),
 * not getpwuid(): the same file whichever libc kern is linked with, and
 * never an NSS module (a static glibc process that dlopen()s one, such as
 * libnss_systemd, crashes). */
static const char *home_dir(void)
{
	static char home[4096];
	static int looked;	/* /etc/passwd, once per process */
	const char *h = abs_env("HOME");
	if (h)
		return h;
	if (looked)
		return home[0] ? home : NULL;
	looked = 1;
	FILE *f = fopen("/etc/passwd", "re");
	if (!f)
		return NULL;
	const struct passwd *pw;
	uid_t uid = geteuid();
	while ((pw = fgetpwent(f)) && pw->pw_uid != uid)
		;
	int found = pw && pw->pw_dir && pw->pw_dir[0] == '/' && strlen(pw->pw_dir) < sizeof home;
	if (found)
		strcpy(home, pw->pw_dir);
	fclose(f);
	return found ? home : NULL;
}

/* private_dir(), and the lstat() that checked it into st. */
static int private_dir_st(const char *path, struct stat *st)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(path, st) < 0)
		return -1;
	if (!S_ISDIR(st->st_mode) || st->st_uid != geteuid()) {
		errno = S_ISLNK(st->st_mode) ? ELOOP : EPERM;
		return -1;
	}
	if ((st->st_mode & 077) && chmod(path, 0700) < 0)
		return -1;
	st->st_mode &= ~(mode_t)077;
	return 0;
}

int private_dir(const char *path)
{
	struct stat st;
	return private_dir_st(path, &st);
}

/* mkdir -p for the parents of a candidate under $HOME or XDG: these may be
 * shared (~/.cache), so only the last component gets private_dir(). */
static int make_parents(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int try_candidate(const char *path, int create, int parents)
{
	if (!create)
		return 0;
	if (parents && make_parents(path) < 0)
		return -1;
	return private_dir(path);
}

/* The runtime directory's candidates (box-cli.md §7.1). Only the order
 * array decides which comes first. */
enum rt_cand {
	RT_XDG,		/* $XDG_RUNTIME_DIR/kern */
	RT_RUN_USER,	/* /run/user/<uid>/kern, when /run/user/<uid> is ours to write */
	RT_RUN_KERN,	/* /run/kern, for root, when /run is a tmpfs */
	RT_DEV_SHM,	/* /dev/shm/kern-<uid> */
	RT_TMP,		/* /tmp/kern-<uid> */
	RT_HOME,	/* $XDG_STATE_HOME/kern/run or ~/.local/state/kern/run */
};
/* A login session's directory first. Then the host-wide ones, memory
 * filesystems before disk: every start writes a record, a claim and a log
 * there and makes and removes its scratch directory, which on a disk
 * filesystem cost about 3 ms a start (issue 16). The shared directories
 * (/dev/shm, /tmp) before the one no other user can create a name in: a
 * squatter who pre-creates every shared name still cannot stop the
 * caller's boxes (OT-8). */
static const enum rt_cand runtime_order[] = {RT_XDG,	 RT_RUN_USER, RT_RUN_KERN,
					     RT_DEV_SHM, RT_TMP,      RT_HOME};
#define RT_COUNT (sizeof runtime_order / sizeof runtime_order[0])

/* A login session's own directory: an older kern used it too, whenever it
 * was there, so no other candidate can hold boxes of this session. */
static int rt_session(enum rt_cand c)
{
	return c == RT_XDG || c == RT_RUN_USER;
}

/* Candidate c's path into out; 0 when it does not apply on this host. */
static int rt_path(enum rt_cand c, char *out, size_t len, const char *home)
{
	unsigned uid = (unsigned)geteuid();
	const char *base;
	struct statfs sf;
	int n = -1;
	switch (c) {
	case RT_XDG:
		if ((base = abs_env("XDG_RUNTIME_DIR")))
			n = snprintf(out, len, "%s/kern", base);
		break;
	case RT_RUN_USER:
		snprintf(out, len, "/run/user/%u", uid);
		if (access(out, W_OK | X_OK) < 0)
			return 0;
		n = snprintf(out, len, "/run/user/%u/kern", uid);
		break;
	case RT_RUN_KERN:
		if (uid != 0 || statfs("/run", &sf) < 0 || sf.f_type != TMPFS_MAGIC)
			return 0;
		n = snprintf(out, len, "/run/kern");
		break;
	case RT_DEV_SHM:
		n = snprintf(out, len, "/dev/shm/kern-%u", uid);
		break;
	case RT_TMP:
		n = snprintf(out, len, "/tmp/kern-%u", uid);
		break;
	case RT_HOME:
		if ((base = abs_env("XDG_STATE_HOME")))
			n = snprintf(out, len, "%s/kern/run", base);
		else if (home)
			n = snprintf(out, len, "%s/.local/state/kern/run", home);
		break;
	}
	return n > 0 && (size_t)n < len;
}

/* What is at a candidate's path: nothing yet, kern's (a real directory
 * of the euid), not ours (a symlink, a file, another user's), or out of
 * reach (a parent we cannot search). */
enum rt_state { RT_ABSENT, RT_OURS, RT_NOT_OURS, RT_UNREACHABLE };

static enum rt_state rt_state(const char *path, struct stat *st)
{
	if (lstat(path, st) < 0)
		return errno == ENOENT ? RT_ABSENT : RT_UNREACHABLE;
	return S_ISDIR(st->st_mode) && st->st_uid == geteuid() ? RT_OURS : RT_NOT_OURS;
}

/* Every candidate as this process found it, probed once: a box start
 * asks for the runtime directory and for the list of them several times
 * (the overlap checks, the runtime root, the claim), and each probe was
 * an access(), a statfs() and an lstat() per candidate (issue 16). What
 * kern makes or fixes itself is written back here. A process runs one
 * command; another kern making or removing a candidate meanwhile is a
 * race every caller already takes (nothing locks across runtime
 * directories). */
static struct rt_probe {
	int done;
	int applies[RT_COUNT];
	enum rt_state state[RT_COUNT];
	struct stat st[RT_COUNT];
	char *path[RT_COUNT];
	/* The paths one after another: one page touched, not one each. */
	char paths[RT_COUNT * PATH_MAX];
} probe;

static struct rt_probe *rt_probe(const char *home)
{
	size_t used = 0;
	if (probe.done)
		return &probe;
	for (size_t i = 0; i < RT_COUNT; i++) {
		probe.path[i] = probe.paths + used;
		probe.applies[i] = rt_path(runtime_order[i], probe.path[i], PATH_MAX, home);
		if (!probe.applies[i])
			continue;
		used += strlen(probe.path[i]) + 1;
		probe.state[i] = rt_state(probe.path[i], &probe.st[i]);
	}
	probe.done = 1;
	return &probe;
}

/* The first usable candidate: its index in runtime_order, or -1. Without
 * create: the one kern box would pick, so ps, stop and exec look where
 * boxes are: a candidate that is ours, or absent with a parent kern box
 * could create it in. With create: made (0700) and checked; a candidate
 * someone else holds is passed over with one note naming it. */
static int runtime_dir(char *out, size_t len, int create, const char *home)
{
	struct rt_probe *p = rt_probe(home);
	const char *skipped = NULL;
	int pick = -1;
	for (size_t i = 0; i < RT_COUNT && pick < 0; i++) {
		enum rt_cand c = runtime_order[i];
		const char *path = p->path[i];
		if (!p->applies[i] || strlen(path) >= len || p->state[i] == RT_UNREACHABLE)
			continue;
		if (p->state[i] == RT_NOT_OURS) {
			if (!skipped)
				skipped = path;
			continue;
		}
		if (!create) {
			char parent[PATH_MAX];
			snprintf(parent, sizeof parent, "%s", path);
			*strrchr(parent, '/') = 0;
			if (p->state[i] == RT_OURS || c == RT_HOME ||
			    access(parent[0] ? parent : "/", W_OK | X_OK) == 0)
				pick = (int)i;
			continue;
		}
		/* Ours and private when probed: what private_dir() checks. */
		if (p->state[i] == RT_OURS && !(p->st[i].st_mode & 077)) {
			pick = (int)i;
			continue;
		}
		if (c == RT_HOME && make_parents(path) < 0)
			continue;
		if (private_dir_st(path, &p->st[i]) == 0) {
			p->state[i] = RT_OURS;
			if (skipped)
				note("%s is not kern's to use (a symlink, or another user's): using %s",
				     skipped, path);
			pick = (int)i;
			continue;
		}
		p->state[i] = rt_state(path, &p->st[i]);
		if (p->state[i] == RT_NOT_OURS && !skipped)
			skipped = path;
	}
	if (pick >= 0) {
		strcpy(out, p->path[pick]);
		return pick;
	}
	errno = skipped ? EPERM : ENOENT;
	return -1;
}

int kern_runtime_each(int (*fn)(const char *dir, void *ctx), void *ctx)
{
	char dir[PATH_MAX];
	struct rt_probe *p;
	dev_t seen_dev[RT_COUNT];
	ino_t seen_ino[RT_COUNT];
	size_t nseen = 0;
	int first = runtime_dir(dir, sizeof dir, 0, home_dir()), rc;
	if (first < 0)
		return 0;
	p = rt_probe(NULL);
	if (p->state[first] == RT_OURS) {
		if ((rc = fn(dir, ctx)))
			return rc;
		seen_dev[nseen] = p->st[first].st_dev;
		seen_ino[nseen++] = p->st[first].st_ino;
	}
	if (rt_session(runtime_order[first]))
		return 0;
	for (size_t i = 0; i < RT_COUNT; i++) {
		if ((int)i == first || rt_session(runtime_order[i]) || !p->applies[i] ||
		    p->state[i] != RT_OURS)
			continue;
		/* One directory under two names (XDG_STATE_HOME inside /tmp,
		 * a symlinked parent) is visited once. */
		const struct stat *st = &p->st[i];
		size_t k = 0;
		while (k < nseen && !(seen_dev[k] == st->st_dev && seen_ino[k] == st->st_ino))
			k++;
		if (k < nseen)
			continue;
		seen_dev[nseen] = st->st_dev;
		seen_ino[nseen++] = st->st_ino;
		if ((rc = fn(p->path[i], ctx)))
			return rc;
	}
	return 0;
}

int kern_dir(enum kern_dir which, char *out, size_t len, int create)
{
	uid_t uid = geteuid();
	const char *base, *home = home_dir();
	char cand[4096];
	int n;

	switch (which) {
	case KDIR_RUNTIME:
		if (runtime_dir(cand, sizeof cand, create, home) >= 0)
			goto done;
		break;
	case KDIR_CACHE:
		if ((base = abs_env("XDG_CACHE_HOME"))) {
			n = snprintf(cand, sizeof cand, "%s/kern/images", base);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		if (home) {
			n = snprintf(cand, sizeof cand, "%s/.cache/kern/images", home);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		snprintf(cand, sizeof cand, "/tmp/kern-cache-%u", (unsigned)uid);
		if (!create || private_dir(cand) == 0) {
			strcat(cand, "/images");
			if (try_candidate(cand, create, 0) == 0)
				goto done;
		}
		break;
	case KDIR_CONFIG:
	case KDIR_DATA: {
		const char *var = which == KDIR_CONFIG ? "XDG_CONFIG_HOME" : "XDG_DATA_HOME";
		const char *sub = which == KDIR_CONFIG ? ".config" : ".local/share";
		if ((base = abs_env(var))) {
			n = snprintf(cand, sizeof cand, "%s/kern", base);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		if (home) {
			n = snprintf(cand, sizeof cand, "%s/%s/kern", home, sub);
			if (n > 0 && (size_t)n < sizeof cand && try_candidate(cand, create, 1) == 0)
				goto done;
		}
		break;
	}
	}
	if (!create)
		errno = ENOENT;
	return -1;
done:
	if (strlen(cand) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(out, cand);
	return 0;
}
