/* unpack_stage and unpack_abort (isolation.md §12.1 steps 1-5): one
 * streaming pass per layer. The codec decompresses and hashes; the raw
 * pass (tar_scan) sees every byte before libarchive does; libarchive
 * reads the members; each member is vetted, filtered and written beneath
 * the staging directory without ever following a symlink. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "base/tree.h"
#include "layer/codec.h"
#include "layer/dirmap.h"
#include "layer/member_path.h"
#include "layer/pump.h"
#include "layer/staging.h"
#include "layer/tar_scan.h"
#include "layer/unpack.h"

#define GiB (1024ULL * 1024 * 1024)
#define CHUNK ((size_t)256 * 1024)
#define MAX_LINKS 40	/* symlink expansions, as the kernel allows */

const struct unpack_limits unpack_default_limits = {
	.max_member = 2 * GiB,
	.max_total = 2 * GiB,
	.max_entries = 2000000,
};

struct stage {
	int stg;			/* the staging directory */
	struct layer_codec *codec;
	struct tar_scan scan;
	struct layer_pump *pump;	/* decodes, hashes and raw-scans ahead */
	char codec_why[256];
	int codec_failed;
	int eof;			/* the codec reached the end of the layer */
	struct dirmap *dirs;
	char *rec;			/* the .kern-layer records */
	size_t rec_len, rec_cap;
	char cache_dir[MEMBER_PATH_MAX + 1];	/* parent directory last used */
	int cache_fd;
	int umask_blocks_owner;
	char *why;
	size_t whylen;
};

static int fail(struct stage *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct stage *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->why, st->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

int staging_name(int index, const char *hex, char *out, size_t len, char *why, size_t whylen)
{
	size_t i = 0;
	for (; hex && hex[i]; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			break;
	if (!hex || i != 64 || hex[i]) {
		snprintf(why, whylen, "bad layer digest '%.80s' (want 64 lowercase hex digits)",
			 hex ? hex : "");
		return -1;
	}
	if (index < 0) {
		snprintf(why, whylen, "bad layer index %d", index);
		return -1;
	}
	snprintf(out, len, ".kern-stg-%d-%s", index, hex);
	return 0;
}

static void drop_cache(struct stage *st)
{
	if (st->cache_fd >= 0)
		close(st->cache_fd);
	st->cache_fd = -1;
	st->cache_dir[0] = 0;
}

static int record(struct stage *st, char tag, const char *path)
{
	size_t n = strlen(path) + 2;
	if (st->rec_len + n > st->rec_cap) {
		size_t cap = st->rec_cap ? st->rec_cap * 2 : 4096;
		while (cap < st->rec_len + n)
			cap *= 2;
		char *p = realloc(st->rec, cap);
		if (!p)
			return fail(st, "out of memory");
		st->rec = p;
		st->rec_cap = cap;
	}
	st->rec[st->rec_len++] = tag;
	memcpy(st->rec + st->rec_len, path, n - 1);
	st->rec_len += n - 1;
	return 0;
}

/* ---- symlinks: where does a target lead? ---- */

enum reach {
	REACH_INSIDE,		/* stays below the root (or never resolves: a loop) */
	REACH_ALIAS,		/* ends on a symlink to an absolute path */
	REACH_ABSOLUTE,		/* is itself absolute */
	REACH_DOTDOT,		/* a '..' climbs above the root */
	REACH_THROUGH,		/* passes through a symlink that escapes */
};

/* Only "." and empty components left: the path ends where it is. */
static int trivial_rest(const char *p)
{
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n > 1 || (n == 1 && *p != '.'))
			return 0;
		p = *e ? e + 1 : e;
	}
	return 1;
}

/* The directory holding path (a cleaned path in staging) as an O_PATH
 * descriptor, its last component in *base: the staging root itself for a
 * top-level name, -1 when the directory cannot be opened. path is
 * restored before returning. */
static int parent_in_staging(struct stage *st, char *path, const char **base)
{
	char *slash = strrchr(path, '/');
	if (!slash) {
		*base = path;
		return st->stg;
	}
	*base = slash + 1;
	*slash = 0;
	int fd = tree_open(st->stg, path, O_PATH | O_DIRECTORY);
	*slash = '/';
	return fd;
}

static void parent_close(struct stage *st, int fd)
{
	if (fd >= 0 && fd != st->stg)
		close(fd);
}

/* Resolve target from the directory dir (a cleaned path) as the kernel
 * would inside the box's root, expanding the symlinks already in staging,
 * and say whether it leaves the root. */
static enum reach reach_of(struct stage *st, const char *dir, const char *target)
{
	enum { CAP = 3 * (MEMBER_PATH_MAX + 2) };
	char *cur = malloc(CAP), *pend = malloc(CAP), *tmp = malloc(CAP);
	enum reach r = REACH_INSIDE;
	int links = 0;
	size_t clen = strlen(dir);
	if (!cur || !pend || !tmp || clen >= CAP || strlen(target) >= CAP) {
		r = REACH_DOTDOT;	/* cannot tell: treat as escaping */
		goto out;
	}
	if (target[0] == '/') {
		r = REACH_ABSOLUTE;
		goto out;
	}
	memcpy(cur, dir, clen + 1);
	snprintf(pend, CAP, "%s", target);
	char *p = pend;
	while (*p) {
		char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		char *rest = *e ? e + 1 : e;
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p = rest;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (clen == 0) {
				r = REACH_DOTDOT;
				goto out;
			}
			char *slash = strrchr(cur, '/');
			clen = slash ? (size_t)(slash - cur) : 0;
			cur[clen] = 0;
			p = rest;
			continue;
		}
		if (clen + 1 + n + 1 > CAP) {
			r = REACH_DOTDOT;
			goto out;
		}
		size_t before = clen;
		if (clen)
			cur[clen++] = '/';
		memcpy(cur + clen, p, n);
		clen += n;
		cur[clen] = 0;
		p = rest;

		/* Is cur a symlink in staging? */
		const char *base;
		int pfd = parent_in_staging(st, cur, &base);
		struct stat sb;
		int is_link = pfd >= 0 && fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
			      S_ISLNK(sb.st_mode);
		ssize_t tl = is_link ? readlinkat(pfd, base, tmp, CAP - 1) : -1;
		parent_close(st, pfd);
		if (!is_link)
			continue;	/* a directory, a file, or nothing yet: go on */
		if (tl <= 0 || ++links > MAX_LINKS)
			goto out;	/* unreadable or a loop: it never resolves */
		tmp[tl] = 0;
		if (tmp[0] == '/') {
			r = trivial_rest(p) ? REACH_ALIAS : REACH_THROUGH;
			goto out;
		}
		/* Replace the link by its target, relative to the link's directory. */
		clen = before;
		cur[clen] = 0;
		size_t rl = strlen(p);
		if ((size_t)tl + 1 + rl + 1 > CAP) {
			r = REACH_DOTDOT;
			goto out;
		}
		memmove(pend + tl + 1, p, rl + 1);
		memcpy(pend, tmp, (size_t)tl);
		pend[tl] = '/';
		p = pend;
	}
out:
	free(cur);
	free(pend);
	free(tmp);
	return r;
}

/* Does the symlink already at path (in staging) lead out of the root? */
static int link_escapes(struct stage *st, int pfd, const char *base, const char *path)
{
	char target[MEMBER_PATH_MAX + 2], dir[MEMBER_PATH_MAX + 1];
	ssize_t n = readlinkat(pfd, base, target, sizeof target - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	memcpy(dir, path, dl);
	dir[dl] = 0;
	enum reach r = reach_of(st, dir, target);
	return r != REACH_INSIDE;
}

/* A member's parent could not be opened: name the symlink or file in the
 * way. */
static int diagnose_parent(struct stage *st, const char *subject, const char *dir, int err)
{
	char prefix[MEMBER_PATH_MAX + 1];
	size_t n = strlen(dir);
	memcpy(prefix, dir, n + 1);
	for (size_t i = 0; i <= n; i++) {
		if (prefix[i] != '/' && prefix[i] != 0)
			continue;
		char save = prefix[i];
		prefix[i] = 0;
		const char *base;
		int pfd = parent_in_staging(st, prefix, &base);
		struct stat sb;
		int got = pfd >= 0 && fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0;
		int rc = 0;
		if (got && S_ISLNK(sb.st_mode)) {
			if (link_escapes(st, pfd, base, prefix))
				rc = fail(st, "%s lies under symlink '%.300s' which escapes the root",
					  subject, prefix);
			else
				rc = fail(st, "layer writes through a symlink: %s lies under symlink '%.300s'",
					  subject, prefix);
		} else if (got && !S_ISDIR(sb.st_mode)) {
			rc = fail(st, "%s lies under '%.300s', which is not a directory", subject, prefix);
		}
		parent_close(st, pfd);
		if (rc)
			return rc;
		prefix[i] = save;
	}
	return fail(st, "%s: open its directory in staging: %s", subject, strerror(err));
}

/* "member '<path>'", the subject of most refusals. */
static const char *subject_of(const char *member, char *buf, size_t len)
{
	snprintf(buf, len, "member '%.300s'", member);
	return buf;
}

/* The directory that will hold member (cleaned, non-empty): created, with
 * any missing parents (recorded as implicit), never through a symlink.
 * *base receives the last component. The descriptor is cached: do not
 * close it. */
static int parent_of(struct stage *st, const char *member, const char **base)
{
	char dir[MEMBER_PATH_MAX + 1];
	const char *slash = strrchr(member, '/');
	*base = slash ? slash + 1 : member;
	if (!slash)
		return st->stg;
	size_t dl = (size_t)(slash - member);
	memcpy(dir, member, dl);
	dir[dl] = 0;
	if (st->cache_fd >= 0 && strcmp(dir, st->cache_dir) == 0)
		return st->cache_fd;
	int fd = tree_open(st->stg, dir, O_PATH | O_DIRECTORY);
	if (fd < 0 && errno == ENOENT) {
		/* Create the missing directories one component at a time. */
		int cur = -1;
		for (size_t i = 0; i <= dl; i++) {
			if (dir[i] != '/' && dir[i] != 0)
				continue;
			char save = dir[i];
			dir[i] = 0;
			const char *s2 = strrchr(dir, '/');
			const char *comp = s2 ? s2 + 1 : dir;
			int at = cur >= 0 ? cur : st->stg;
			int next = openat(at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0 && errno == ENOENT) {
				struct dir_info *info;
				if (mkdirat(at, comp, 0700) < 0 ||
				    (st->umask_blocks_owner && tree_chmod(at, comp, 0700) < 0)) {
					int e = errno;
					if (cur >= 0)
						close(cur);
					return fail(st, "mkdir '%.300s' in staging: %s", dir, strerror(e));
				}
				if (!(info = dirmap_put(st->dirs, dir))) {
					if (cur >= 0)
						close(cur);
					return fail(st, "out of memory");
				}
				info->implicit = 1;
				info->mode = 0755;
				next = openat(at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			}
			int e = errno;
			if (cur >= 0)
				close(cur);
			if (next < 0) {
				char subj[400];
				dir[i] = save;
				return diagnose_parent(st, subject_of(member, subj, sizeof subj), dir, e);
			}
			cur = next;
			dir[i] = save;
		}
		fd = cur;
	}
	if (fd < 0) {
		char subj[400];
		return diagnose_parent(st, subject_of(member, subj, sizeof subj), dir, errno);
	}
	drop_cache(st);
	memcpy(st->cache_dir, dir, dl + 1);
	st->cache_fd = fd;
	return fd;
}

/* Something already has this member's name in staging (a member repeated
 * in one layer): the later member wins, never through a symlink. */
static int clear_name(struct stage *st, int pfd, const char *base, const char *member,
		      int keep_dir)
{
	struct stat sb;
	if (fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : fail(st, "stat '%.300s' in staging: %s", member, strerror(errno));
	if (S_ISDIR(sb.st_mode)) {
		if (keep_dir)
			return 0;
		drop_cache(st);
		if (tree_rm_at(pfd, base) < 0)
			return fail(st, "remove '%.300s' in staging: %s", member, strerror(errno));
		dirmap_remove_under(st->dirs, member);
		return 0;
	}
	if (S_ISLNK(sb.st_mode) && link_escapes(st, pfd, base, member))
		return fail(st, "member '%.300s' is at symlink '%.300s' which escapes the root", member,
			    member);
	if (unlinkat(pfd, base, 0) < 0)
		return fail(st, "unlink '%.300s' in staging: %s", member, strerror(errno));
	return 0;
}

static void entry_times(struct archive_entry *e, struct timespec ts[2])
{
	ts[0].tv_sec = ts[1].tv_sec = 0;
	if (archive_entry_mtime_is_set(e)) {
		ts[0].tv_sec = ts[1].tv_sec = archive_entry_mtime(e);
		ts[0].tv_nsec = ts[1].tv_nsec = archive_entry_mtime_nsec(e);
	} else {
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	}
}

static int write_all_fd(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int do_file(struct stage *st, struct archive *a, struct archive_entry *e, const char *member)
{
	const char *base;
	int pfd = parent_of(st, member, &base);
	if (pfd < 0)
		return -1;
	int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		if (clear_name(st, pfd, base, member, 0) < 0)
			return -1;
		if ((pfd = parent_of(st, member, &base)) < 0)
			return -1;
		fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return fail(st, "create '%.300s' in staging: %s", member, strerror(errno));
	int64_t expect = 0;
	for (;;) {
		const void *blk;
		size_t n;
		la_int64_t off;
		int r = archive_read_data_block(a, &blk, &n, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			close(fd);
			return -2;	/* the stream failed: reported by the caller */
		}
		if (off != expect) {
			close(fd);
			return fail(st, "sparse file '%.300s'", member);
		}
		if (n && write_all_fd(fd, blk, n) < 0) {
			int err = errno;
			close(fd);
			return fail(st, "write '%.300s' in staging: %s", member, strerror(err));
		}
		expect += (int64_t)n;
	}
	struct timespec ts[2];
	entry_times(e, ts);
	/* Filter: setuid and setgid never survive; the sticky bit does. */
	mode_t mode = archive_entry_perm(e) & 01777;
	if (fchmod(fd, mode) < 0 || futimens(fd, ts) < 0) {
		int err = errno;
		close(fd);
		return fail(st, "set mode and mtime of '%.300s': %s", member, strerror(err));
	}
	if (close(fd) < 0)
		return fail(st, "write '%.300s' in staging: %s", member, strerror(errno));
	return 0;
}

static int do_dir(struct stage *st, struct archive_entry *e, const char *member)
{
	const char *base;
	int pfd = parent_of(st, member, &base);
	if (pfd < 0)
		return -1;
	if (mkdirat(pfd, base, 0700) < 0) {
		if (errno != EEXIST)
			return fail(st, "mkdir '%.300s' in staging: %s", member, strerror(errno));
		if (clear_name(st, pfd, base, member, 1) < 0)
			return -1;
		if ((pfd = parent_of(st, member, &base)) < 0)
			return -1;
		if (mkdirat(pfd, base, 0700) < 0 && errno != EEXIST)
			return fail(st, "mkdir '%.300s' in staging: %s", member, strerror(errno));
	}
	if (st->umask_blocks_owner && tree_chmod(pfd, base, 0700) < 0)
		return fail(st, "chmod '%.300s' in staging: %s", member, strerror(errno));
	struct dir_info *info = dirmap_put(st->dirs, member);
	if (!info)
		return fail(st, "out of memory");
	struct timespec ts[2];
	entry_times(e, ts);
	info->implicit = 0;
	info->mode = archive_entry_perm(e) & 07777;
	info->mtime_set = ts[1].tv_nsec != UTIME_OMIT;
	info->sec = ts[1].tv_sec;
	info->nsec = ts[1].tv_nsec;
	return 0;
}

static int do_symlink(struct stage *st, struct archive_entry *e, const char *member)
{
	const char *target = archive_entry_symlink(e), *base;
	if (!target || !*target)
		return fail(st, "symlink '%.300s' has an empty target", member);
	if (strlen(target) >= MEMBER_PATH_MAX)
		return fail(st, "symlink '%.300s' has a target longer than 4095 bytes", member);
	int pfd = parent_of(st, member, &base);
	if (pfd < 0)
		return -1;
	if (target[0] != '/') {
		char dir[MEMBER_PATH_MAX + 1];
		size_t dl = (size_t)(base - member);
		dl = dl ? dl - 1 : 0;
		memcpy(dir, member, dl);
		dir[dl] = 0;
		enum reach r = reach_of(st, dir, target);
		if (r == REACH_DOTDOT || r == REACH_THROUGH)
			return fail(st, "symlink '%.300s' -> '%.300s' escapes the root", member, target);
	}
	if (symlinkat(target, pfd, base) < 0) {
		if (errno != EEXIST)
			return fail(st, "symlink '%.300s' in staging: %s", member, strerror(errno));
		if (clear_name(st, pfd, base, member, 0) < 0)
			return -1;
		if ((pfd = parent_of(st, member, &base)) < 0)
			return -1;
		if (symlinkat(target, pfd, base) < 0)
			return fail(st, "symlink '%.300s' in staging: %s", member, strerror(errno));
	}
	struct timespec ts[2];
	entry_times(e, ts);
	if (utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(st, "set the mtime of symlink '%.300s': %s", member, strerror(errno));
	return 0;
}

static int do_hardlink(struct stage *st, struct archive_entry *e, const char *member)
{
	const char *raw = archive_entry_hardlink(e), *why, *base;
	char target[MEMBER_PATH_MAX + 1], tdir[MEMBER_PATH_MAX + 1];
	if (!raw || !*raw)
		return fail(st, "hardlink '%.300s' has an empty target", member);
	if (member_path_clean(raw, strlen(raw), target, sizeof target, &why) < 0)
		return fail(st, "hardlink '%.300s' -> '%.300s': %s", member, raw, why);
	if (!*target)
		return fail(st, "hardlink '%.300s' -> '%.300s': the target is not a regular file "
			    "extracted earlier from this layer", member, raw);
	const char *slash = strrchr(target, '/');
	const char *tbase = slash ? slash + 1 : target;
	size_t dl = slash ? (size_t)(slash - target) : 0;
	memcpy(tdir, target, dl);
	tdir[dl] = 0;
	int tfd = dl ? tree_open(st->stg, tdir, O_PATH | O_DIRECTORY) : st->stg;
	if (tfd < 0) {
		int err = errno;
		/* Name the symlink in the target's way, if that is what it is. */
		if (err == ELOOP || err == ENOTDIR) {
			char subj[700];
			snprintf(subj, sizeof subj, "hardlink '%.300s' -> '%.300s': the target", member, raw);
			diagnose_parent(st, subj, tdir, err);
			if (strstr(st->why, "symlink '"))
				return -1;
		}
		return fail(st, "hardlink '%.300s' -> '%.300s': the target is not a regular file "
			    "extracted earlier from this layer", member, raw);
	}
	struct stat tsb;
	int ok = fstatat(tfd, tbase, &tsb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(tsb.st_mode);
	if (!ok) {
		if (dl)
			close(tfd);
		return fail(st, "hardlink '%.300s' -> '%.300s': the target is not a regular file "
			    "extracted earlier from this layer", member, raw);
	}
	int pfd = parent_of(st, member, &base);
	int rc = pfd < 0 ? -1 : 0;
	if (rc == 0 && linkat(tfd, tbase, pfd, base, 0) < 0) {
		int err = errno;
		struct stat dsb;
		if (err == EEXIST && fstatat(pfd, base, &dsb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    dsb.st_ino == tsb.st_ino && dsb.st_dev == tsb.st_dev)
			rc = 0;	/* already that file */
		else if (err == EEXIST && (clear_name(st, pfd, base, member, 0) < 0 ||
					   (pfd = parent_of(st, member, &base)) < 0))
			rc = -1;
		else if (err != EEXIST || linkat(tfd, tbase, pfd, base, 0) < 0)
			rc = fail(st, "link '%.300s' in staging: %s", member,
				  strerror(err != EEXIST ? err : errno));
	}
	if (dl)
		close(tfd);
	return rc;
}

/* A whiteout or opaque marker: recorded for the merge, never written.
 * Its directory must not lie under a symlink of this layer either. */
static int do_marker(struct stage *st, enum member_kind kind, const char *member,
		     const char *target)
{
	const char *slash = strrchr(member, '/');
	if (slash) {
		char dir[MEMBER_PATH_MAX + 1];
		size_t dl = (size_t)(slash - member);
		memcpy(dir, member, dl);
		dir[dl] = 0;
		int fd = tree_open(st->stg, dir, O_PATH | O_DIRECTORY);
		if (fd >= 0)
			close(fd);
		else if (errno != ENOENT) {
			char subj[400];
			snprintf(subj, sizeof subj, "whiteout '%.300s'", member);
			return diagnose_parent(st, subj, dir, errno);
		}
	}
	return record(st, kind == MEMBER_OPAQUE ? 'O' : 'W', target);
}

static int check_framing(struct stage *st, struct archive *a, struct archive_entry *e)
{
	struct tar_scan_entry se;
	mode_t ft = archive_entry_filetype(e);
	la_int64_t pos = archive_read_header_position(a);
	if (!pump_scan_next(st->pump, &se))
		return fail(st, "tar headers are ambiguous: a member at offset %lld that the raw "
			    "headers do not show", (long long)pos);
	if (pos != (la_int64_t)se.start)
		return fail(st, "tar headers are ambiguous: a member at offset %lld, the raw headers "
			    "put it at %llu", (long long)pos, (unsigned long long)se.start);
	int ok;
	/* libarchive makes any member with a link name (a PAX linkpath, a GNU
	 * K record) a hardlink; other readers keep the typeflag. */
	if ((archive_entry_hardlink(e) != NULL) != (se.type == '1') ||
	    (archive_entry_symlink(e) != NULL && se.type != '2'))
		return fail(st, "tar headers are ambiguous at offset %lld: a link name on a member "
			    "of type '%c'", (long long)pos, se.type ? se.type : '0');
	switch (se.type) {
	case '0': case 0: case '7':
		ok = (ft == AE_IFREG && (uint64_t)archive_entry_size(e) == se.size) ||
		     ft == AE_IFDIR;
		break;
	case '1':
		ok = archive_entry_hardlink(e) != NULL;
		break;
	case '2':
		ok = ft == AE_IFLNK;
		break;
	case '3':
		ok = ft == AE_IFCHR;
		break;
	case '4':
		ok = ft == AE_IFBLK;
		break;
	default:
		ok = ft == AE_IFDIR;
		break;
	}
	if (!ok)
		return fail(st, "tar headers are ambiguous at offset %lld", (long long)pos);
	return 0;
}

static int one_member(struct stage *st, struct archive *a, struct archive_entry *e)
{
	const char *raw = archive_entry_pathname(e), *why;
	char member[MEMBER_PATH_MAX + 1], target[MEMBER_PATH_MAX + 1];
	mode_t ft = archive_entry_filetype(e);

	if (check_framing(st, a, e) < 0)
		return -1;
	/* Filter: device nodes are dropped without a word. */
	if (ft == AE_IFCHR || ft == AE_IFBLK)
		return 0;
	if (!raw)
		return fail(st, "a member without a name");
	if (member_path_clean(raw, strlen(raw), member, sizeof member, &why) < 0)
		return fail(st, "member '%.300s': %s", raw, why);
	const char *hard = archive_entry_hardlink(e);
	int is_dir = ft == AE_IFDIR;
	if (is_dir && archive_entry_size(e) != 0)
		return fail(st, "directory header '%.300s' with non-zero size", raw);
	if (ft == AE_IFIFO || ft == AE_IFSOCK)
		return fail(st, "member '%.300s' is a FIFO or socket", raw);
	enum member_kind kind;
	if (member_classify(member, target, sizeof target, &kind, &why) < 0)
		return fail(st, "member '%.300s': %s", raw, why);
	if (kind == MEMBER_IGNORED)
		return 0;
	if (kind != MEMBER_PLAIN)
		return do_marker(st, kind, member, target);
	if (!*member) {
		/* The root itself ("./"): nothing to make. */
		if (!is_dir)
			return fail(st, "member '%.300s' names the root but is not a directory", raw);
		return 0;
	}
	if (hard && *hard)
		return do_hardlink(st, e, member);
	if (ft == AE_IFLNK)
		return do_symlink(st, e, member);
	if (is_dir)
		return do_dir(st, e, member);
	if (ft == AE_IFREG)
		return do_file(st, a, e, member);
	return fail(st, "member '%.300s' has an unsupported type", raw);
}

/* libarchive's source: the pump's next chunk, already hashed and seen by
 * the raw pass. */
static la_ssize_t feed(struct archive *a, void *ctx, const void **out)
{
	struct stage *st = ctx;
	(void)a;
	return pump_next(st->pump, out);
}

/* Why the archive stopped: the raw pass and the codec know better than
 * libarchive's generic message. Called once the pump has stopped. */
static int stream_failed(struct stage *st, const char *archive_msg)
{
	if (st->scan.failed && st->scan.bad_start)
		return fail(st, "layer is neither gzip, zstd nor tar (it starts %s)",
			    codec_magic_hex(st->codec));
	if (st->scan.failed)
		return fail(st, "%s", st->scan.why);
	if (st->codec_failed)
		return fail(st, "%s", st->codec_why);
	if (st->eof && tar_scan_finish(&st->scan) < 0)
		return fail(st, "%s", st->scan.why);
	return fail(st, "tar: %s", *archive_msg ? archive_msg : "unreadable archive");
}

static int cmp_depth(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	size_t da = 0, db = 0;
	for (; *a; a++)
		da += *a == '/';
	for (; *b; b++)
		db += *b == '/';
	return da < db ? 1 : da > db ? -1 : 0;
}

/* Give every directory its final mode and mtime, deepest first so closing
 * a parent never locks us out of a child; then write the records. */
static int finish_tree(struct stage *st)
{
	size_t n = dirmap_count(st->dirs), it = 0, k = 0;
	const char **paths = malloc((n ? n : 1) * sizeof *paths);
	struct dir_info *info;
	const char *p;
	if (!paths)
		return fail(st, "out of memory");
	while ((p = dirmap_next(st->dirs, &it, &info)))
		paths[k++] = p;
	qsort(paths, k, sizeof *paths, cmp_depth);
	drop_cache(st);
	for (size_t i = 0; i < k; i++) {
		info = dirmap_get(st->dirs, paths[i]);
		int fd = tree_open(st->stg, paths[i], O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			fail(st, "open directory '%.300s' in staging: %s", paths[i], strerror(errno));
			free(paths);
			return -1;
		}
		struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
		if (!info->implicit && info->mtime_set) {
			ts[0].tv_sec = ts[1].tv_sec = info->sec;
			ts[0].tv_nsec = ts[1].tv_nsec = info->nsec;
		}
		int rc = futimens(fd, ts) < 0 || fchmod(fd, info->mode) < 0 ? -1 : 0;
		int err = errno;
		close(fd);
		if (rc < 0) {
			fail(st, "set mode of directory '%.300s': %s", paths[i], strerror(err));
			free(paths);
			return -1;
		}
		if (info->implicit && record(st, 'I', paths[i]) < 0) {
			free(paths);
			return -1;
		}
	}
	free(paths);
	int fd = openat(st->stg, STAGING_RECORDS, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0 || (st->rec_len && write_all_fd(fd, st->rec, st->rec_len) < 0)) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return fail(st, "write the layer records in staging: %s", strerror(err));
	}
	close(fd);
	return 0;
}

static int extract(struct stage *st)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char archive_msg[256] = "";
	int rc = 0, broken = 0;
	if (!a || !(st->pump = pump_start(st->codec, &st->scan, CHUNK))) {
		if (a)
			archive_read_free(a);
		return fail(st, "cannot start decoding the layer: out of memory or threads");
	}
	/* The tar format alone: no filters (we decompress ourselves) and no
	 * _all() registration, which would drag every format into the
	 * static binary. */
	archive_read_support_format_tar(a);
	if (archive_read_open(a, st, NULL, feed, NULL) != ARCHIVE_OK)
		broken = 1;
	while (!broken) {
		int r = archive_read_next_header(a, &e);
		if (pump_failed(st->pump) || (r < ARCHIVE_WARN && r != ARCHIVE_EOF)) {
			/* ARCHIVE_WARN is only libarchive noting that a UTF-8 name does
			 * not convert to the C locale; it keeps the raw bytes. */
			broken = 1;
			break;
		}
		if (r == ARCHIVE_EOF)
			break;
		r = one_member(st, a, e);
		if (r == -2 || (r < 0 && pump_failed(st->pump))) {
			broken = 1;
		} else if (r < 0) {
			rc = -1;
			break;
		}
	}
	if (broken)
		snprintf(archive_msg, sizeof archive_msg, "%s",
			 archive_error_string(a) ? archive_error_string(a) : "");
	archive_read_free(a);
	/* libarchive stops at the first zero block: the rest of the stream
	 * still feeds the hash and the end-of-archive checks. */
	if (!broken && rc == 0) {
		const void *b;
		ssize_t n;
		while ((n = pump_next(st->pump, &b)) > 0)
			;
		broken = n < 0;
	}
	pump_finish(st->pump, &st->eof, &st->codec_failed, st->codec_why, sizeof st->codec_why);
	st->pump = NULL;
	if (broken)
		return stream_failed(st, archive_msg);
	if (rc < 0)
		return rc;
	if (tar_scan_finish(&st->scan) < 0)
		return fail(st, "%s", st->scan.why);
	struct tar_scan_entry left;
	if (tar_scan_next(&st->scan, &left))
		return fail(st, "hidden member at offset %llu: the raw headers show a member the tar "
			    "reader did not return", (unsigned long long)left.start);
	return 0;
}

/* The umask, read from /proc so another thread never sees it changed. */
static mode_t current_umask(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long um = 0;
	int found = 0;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "Umask:", 6) == 0) {
			char *end;
			um = strtoul(line + 6, &end, 8);
			found = end != line + 6 && um <= 0777;
			break;
		}
	if (f)
		fclose(f);
	if (!found) {
		mode_t old = umask(077);
		umask(old);
		return old;
	}
	return (mode_t)um;
}

int unpack_stage(const struct layer_reader *r, int rootfs_fd, int index, const char *hex,
		 const struct unpack_limits *lim, unsigned char diff_id[32], char *why,
		 size_t whylen)
{
	char name[STAGING_NAME_MAX];
	struct stage st;
	int rc = -1;

	memset(&st, 0, sizeof st);
	st.stg = st.cache_fd = -1;
	st.why = why;
	st.whylen = whylen;
	if (staging_name(index, hex, name, sizeof name, why, whylen) < 0)
		return -1;
	if (!lim)
		lim = &unpack_default_limits;
	st.umask_blocks_owner = (current_umask() & 0700) != 0;

	/* A leftover of a killed pull goes first. */
	if (tree_rm_at(rootfs_fd, name) < 0 || mkdirat(rootfs_fd, name, 0700) < 0) {
		fail(&st, "create staging directory %s: %s", name, strerror(errno));
		return -1;
	}
	st.stg = openat(rootfs_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	st.dirs = dirmap_new();
	tar_scan_init(&st.scan, lim);
	if (st.stg < 0 || !st.dirs) {
		fail(&st, "open staging directory %s: %s", name, st.stg < 0 ? strerror(errno) : "out of memory");
		goto out;
	}
	if (st.umask_blocks_owner)
		tree_chmod(rootfs_fd, name, 0700);
	st.codec = codec_open(r, why, whylen);
	if (!st.codec)
		goto out;
	if (extract(&st) < 0 || finish_tree(&st) < 0)
		goto out;
	codec_diff_id(st.codec, diff_id);
	rc = 0;
out:
	drop_cache(&st);
	tar_scan_free(&st.scan);
	codec_free(st.codec);
	dirmap_free(st.dirs);
	free(st.rec);
	if (st.stg >= 0)
		close(st.stg);
	if (rc < 0) {
		int saved = errno;
		tree_rm_at(rootfs_fd, name);
		errno = saved;
	}
	return rc;
}

void unpack_abort(int rootfs_fd, int index, const char *hex)
{
	char name[STAGING_NAME_MAX], why[160];
	if (staging_name(index, hex, name, sizeof name, why, sizeof why) == 0)
		tree_rm_at(rootfs_fd, name);
}
