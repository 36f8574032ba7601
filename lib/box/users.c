#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/path.h"
#include "box/users.h"

static const char host_passwd[] =
	"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char host_group[] = "root:x:0:\nnogroup:x:65534:\n";

/* The whole file (bounded) or the built-in text; caller frees. */
static char *slurp(int rootfd, const char *rel, const char *builtin)
{
	if (rootfd < 0)
		return strdup(builtin);
	int fd = open_beneath(rootfd, rel, O_RDONLY, 0);
	if (fd < 0)
		return strdup("");
	char *buf = malloc(1 << 20);
	ssize_t n = buf ? read(fd, buf, (1 << 20) - 1) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	buf[n] = 0;
	return buf;
}

/* Field f (0-based) of a colon-separated line, copied into out. A line
 * with fewer fields has no field f: the walk never crosses into the next
 * line (found by the image_config fuzz target). */
static int field(const char *line, int f, char *out, size_t len)
{
	const char *p = line;
	for (int i = 0; i < f; i++) {
		p += strcspn(p, ":\n");
		if (*p != ':')
			return -1;
		p++;
	}
	size_t n = strcspn(p, ":\n");
	if (n >= len)
		return -1;
	memcpy(out, p, n);
	out[n] = 0;
	return 0;
}

/* Find the line whose field `key_field` equals key (or whose id field
 * equals it when numeric). */
static const char *find_line(const char *text, int key_field, const char *key)
{
	char buf[256];
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (field(l, key_field, buf, sizeof buf) == 0 && strcmp(buf, key) == 0)
			return l;
	}
	return NULL;
}

static int num(const char *s, unsigned long *out)
{
	unsigned long long v;
	if (parse_u64(s, &v) < 0 || v > 0xFFFFFFFEULL)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

int user_resolve(int rootfd, const char *spec, struct lockdown *ld, char *why, size_t len)
{
	char user[256], group[256] = "", name[256] = "", buf[256];
	unsigned long uid, gid = 0;
	const char *colon = strchr(spec, ':');
	int rc = -1;

	if (strlen(spec) >= sizeof user || !*spec) {
		snprintf(why, len, "bad --user '%s'", spec);
		return -1;
	}
	snprintf(user, sizeof user, "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	if (colon)
		snprintf(group, sizeof group, "%s", colon + 1);
	char *pw = slurp(rootfd, "etc/passwd", host_passwd);
	char *gr = slurp(rootfd, "etc/group", host_group);
	if (!pw || !gr)
		goto out;

	const char *line;
	if (num(user, &uid) == 0) {
		line = find_line(pw, 2, user);
		if (line) {
			field(line, 0, name, sizeof name);
			if (field(line, 3, buf, sizeof buf) == 0)
				num(buf, &gid);
		}
	} else {
		line = find_line(pw, 0, user);
		if (!line || field(line, 2, buf, sizeof buf) < 0 || num(buf, &uid) < 0) {
			snprintf(why, len, "no user '%s' in the box's /etc/passwd", user);
			goto out;
		}
		snprintf(name, sizeof name, "%s", user);
		if (field(line, 3, buf, sizeof buf) == 0)
			num(buf, &gid);
	}
	if (*group) {
		if (num(group, &gid) < 0) {
			line = find_line(gr, 0, group);
			if (!line || field(line, 2, buf, sizeof buf) < 0 || num(buf, &gid) < 0) {
				snprintf(why, len, "no group '%s' in the box's /etc/group", group);
				goto out;
			}
		}
	} else if (colon) {
		snprintf(why, len, "bad --user '%s': empty group", spec);
		goto out;
	}
	ld->uid = (uid_t)uid;
	ld->gid = (gid_t)gid;
	/* Supplementary groups as initgroups(3) makes them for a login (and
	 * Docker for --user): the primary group, then every group listing the
	 * user by name. */
	ld->groups[0] = ld->gid;
	ld->ngroups = 1;
	for (const char *l = gr; *name && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char members[4096], gbuf[32];
		unsigned long g;
		if (field(l, 3, members, sizeof members) < 0 || field(l, 2, gbuf, sizeof gbuf) < 0 ||
		    num(gbuf, &g) < 0)
			continue;
		int have = 0;
		for (int i = 0; i < ld->ngroups; i++)
			have |= ld->groups[i] == (gid_t)g;
		/* A group listed twice (two lines with one gid, a name repeated
		 * among the members) is still one group, as initgroups(3) has it. */
		for (char *p = members, *m; !have && (m = strsep(&p, ","));)
			if (strcmp(m, name) == 0 && ld->ngroups < LOCKDOWN_MAX_GROUPS) {
				ld->groups[ld->ngroups++] = (gid_t)g;
				have = 1;
			}
	}
	ld->user_set = uid != 0 || gid != 0 || ld->ngroups > 1;
	rc = 0;
out:
	free(pw);
	free(gr);
	return rc;
}

void user_format(const struct lockdown *ld, char *out, size_t len)
{
	size_t o;
	if (!ld->user_set) {
		out[0] = 0;
		return;
	}
	o = (size_t)snprintf(out, len, "%u:%u", (unsigned)ld->uid, (unsigned)ld->gid);
	for (int i = 0; i < ld->ngroups && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%u", i ? "," : ":", (unsigned)ld->groups[i]);
}

int user_parse_numeric(const char *s, struct lockdown *ld)
{
	char copy[1024];
	unsigned long v;
	snprintf(copy, sizeof copy, "%s", s);
	char *p = copy, *u = strsep(&p, ":"), *g = strsep(&p, ":"), *rest = p;
	if (!u || !g || num(u, &v) < 0)
		return -1;
	ld->uid = (uid_t)v;
	if (num(g, &v) < 0)
		return -1;
	ld->gid = (gid_t)v;
	ld->ngroups = 0;
	for (char *q = rest, *t; q && (t = strsep(&q, ","));) {
		if (num(t, &v) < 0 || ld->ngroups >= LOCKDOWN_MAX_GROUPS)
			return -1;
		ld->groups[ld->ngroups++] = (gid_t)v;
	}
	ld->user_set = 1;
	return 0;
}
