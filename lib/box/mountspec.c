#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/path.h"
#include "box/mountspec.h"

int parse_volume(const char *spec, struct bind_spec *b, const char **why)
{
	char *copy = strdup(spec), *f[4];
	int n = 0;
	memset(b, 0, sizeof *b);
	if (!copy) {
		*why = "out of memory";
		return -1;
	}
	for (char *p = copy, *tok; n < 4 && (tok = strsep(&p, ":"));)
		f[n++] = tok;
	if (n < 2 || n > 3 || strchr(spec, ':') == NULL ||
	    (n == 3 && strcmp(f[2], "ro") != 0 && strcmp(f[2], "rw") != 0)) {
		free(copy);
		*why = "expected SRC:DST[:ro|:rw] (use --mount for paths holding ':' or ',')";
		return -1;
	}
	/* Count the fields really present: strsep stops at 4 above. */
	if (n == 3 && strchr(f[2], ':')) {
		free(copy);
		*why = "expected SRC:DST[:ro|:rw]";
		return -1;
	}
	b->src = strdup(f[0]);
	b->dst = strdup(f[1]);
	b->ro = n == 3 && strcmp(f[2], "ro") == 0;
	free(copy);
	return b->src && b->dst ? 0 : -1;
}

/* One CSV field: quoted fields may hold ',' and ':', "" is one '"'. */
static const char *csv_field(const char *p, char *out, size_t len, const char **why)
{
	size_t o = 0;
	int quoted = 0;
	for (; *p; p++) {
		if (*p == '"') {
			if (quoted && p[1] == '"') {
				p++;
			} else {
				quoted = !quoted;
				continue;
			}
		} else if (*p == ',' && !quoted) {
			break;
		}
		if (o + 1 >= len) {
			*why = "field too long";
			return NULL;
		}
		out[o++] = *p;
	}
	if (quoted) {
		*why = "unterminated quote";
		return NULL;
	}
	out[o] = 0;
	return p;
}

int parse_mount(const char *spec, struct bind_spec *b, const char **why)
{
	char field[4200];
	const char *p = spec;
	int type_seen = 0;
	memset(b, 0, sizeof *b);
	b->must_exist = 1;
	while (p) {
		p = csv_field(p, field, sizeof field, why);
		if (!p)
			goto bad;
		char *eq = strchr(field, '=');
		const char *k = field, *v = eq ? eq + 1 : NULL;
		if (eq)
			*eq = 0;
		if (strcmp(k, "type") == 0 && v) {
			if (strcmp(v, "bind") != 0) {
				*why = "only type=bind is supported";
				goto bad;
			}
			type_seen = 1;
		} else if ((strcmp(k, "src") == 0 || strcmp(k, "source") == 0) && v && !b->src) {
			b->src = strdup(v);
		} else if ((strcmp(k, "dst") == 0 || strcmp(k, "destination") == 0 ||
			    strcmp(k, "target") == 0) && v && !b->dst) {
			b->dst = strdup(v);
		} else if ((strcmp(k, "ro") == 0 || strcmp(k, "readonly") == 0) &&
			   (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)) {
			b->ro = 1;
		} else if (strcmp(k, "rw") == 0 && !v) {
			b->ro = 0;
		} else if (strcmp(k, "noexec") == 0 && !v) {
			b->noexec = 1;
		} else {
			*why = "unknown or repeated key (keys: type, src, dst, ro, rw, noexec)";
			goto bad;
		}
		p = *p == ',' ? p + 1 : NULL;
	}
	if (!type_seen || !b->src || !b->dst) {
		*why = "needs type=bind, src= and dst=";
		goto bad;
	}
	return 0;
bad:
	free(b->src);
	free(b->dst);
	b->src = b->dst = NULL;
	return -1;
}

static int refused_target(const char *c, int below)
{
	static const char *const special[] = {"/proc", "/sys", "/dev"};
	if (strcmp(c, "/") == 0)
		return 1;
	for (size_t i = 0; i < 3; i++)
		if (below ? path_is_under(c, special[i]) : strcmp(c, special[i]) == 0)
			return 1;
	return 0;
}

int bind_check(struct bind_spec *b, const char **why)
{
	char c[4096];
	if (!b->src || b->src[0] != '/' || strchr(b->src, '\n') || strlen(b->src) >= 4000) {
		*why = "the source must be an absolute path without newlines";
		return -1;
	}
	if (!b->dst || b->dst[0] != '/' || !path_is_clean_abs(b->dst) || strlen(b->dst) >= 4000) {
		*why = "the target must be an absolute path without '.' or '..' components";
		return -1;
	}
	path_collapse(b->dst, c, sizeof c);
	/* /proc and /sys are kern's own below; /dev itself too (binds at
	 * /dev/shm and deeper are allowed). */
	if (refused_target(c, 0) || path_is_under(c, "/proc") || path_is_under(c, "/sys")) {
		*why = "the target may not be /, /proc, /sys, /dev or below /proc or /sys";
		return -1;
	}
	strcpy(b->dst, c);
	return 0;
}

/* --tmpfs's options after the colon: a bare SIZE (kern's own form) or
 * size=SIZE first, then mode=OCTAL, noexec, strictatime; rw, nosuid and
 * nodev are accepted, a box's tmpfs being all three anyway. */
static int tmpfs_options(const char *opts, struct tmpfs_spec *t, const char **why)
{
	char buf[256];
	if (strlen(opts) >= sizeof buf) {
		*why = "options too long";
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", opts);
	int first = 1;
	for (char *p = buf, *o; (o = strsep(&p, ",")); first = 0) {
		char *end;
		if (!strncmp(o, "size=", 5) || (first && *o >= '0' && *o <= '9')) {
			if (parse_size(o + (o[0] == 's' ? 5 : 0), 1, &t->size) < 0) {
				*why = "SIZE must be digits with an optional k, m, g or t";
				return -1;
			}
		} else if (!strncmp(o, "mode=", 5)) {
			unsigned long m = strtoul(o + 5, &end, 8);
			if (!o[5] || *end || m > 07777) {
				*why = "mode= takes an octal mode up to 7777";
				return -1;
			}
			t->mode = (unsigned)m;
		} else if (!strcmp(o, "noexec")) {
			t->noexec = 1;
		} else if (!strcmp(o, "strictatime")) {
			t->strictatime = 1;
		} else if (strcmp(o, "rw") != 0 && strcmp(o, "nosuid") != 0 && strcmp(o, "nodev") != 0) {
			*why = "options are SIZE or size=SIZE, mode=OCTAL, noexec, strictatime (rw, nosuid, nodev: always)";
			return -1;
		}
	}
	return 0;
}

int parse_tmpfs(const char *spec, struct tmpfs_spec *t, const char **why)
{
	char path[4096];
	const char *colon = strchr(spec, ':');
	memset(t, 0, sizeof *t);
	if (strlen(spec) >= sizeof path) {
		*why = "path too long";
		return -1;
	}
	if (colon) {
		if (tmpfs_options(colon + 1, t, why) < 0)
			return -1;
		snprintf(path, sizeof path, "%.*s", (int)(colon - spec), spec);
	} else {
		snprintf(path, sizeof path, "%s", spec);
	}
	if (path[0] != '/' || !path_is_clean_abs(path) || strchr(path, ':')) {
		*why = "PATH must be absolute, without ':' or '.' and '..' components";
		return -1;
	}
	char c[4096];
	path_collapse(path, c, sizeof c);
	if (refused_target(c, 1)) {
		*why = "the target may not be /, /proc, /sys, /dev or anything below them";
		return -1;
	}
	t->path = strdup(c);
	return t->path ? 0 : -1;
}

/* Append `,key=value`, wrapping the whole field in quotes (with "" for a
 * quote) when the value holds , : or ". */
static int put_field(char *out, size_t len, size_t *o, const char *key, const char *val)
{
	int quote = strpbrk(val, ",:\"") != NULL;
	char field[8300];
	int n = snprintf(field, sizeof field, "%s=%s", key, val);
	if (n < 0 || (size_t)n >= sizeof field)
		return -1;
	if (*o && *o + 1 < len)
		out[(*o)++] = ',';
	if (quote && *o + 1 < len)
		out[(*o)++] = '"';
	for (const char *f = field; *f; f++) {
		if (*o + 3 >= len)
			return -1;
		if (quote && *f == '"')
			out[(*o)++] = '"';
		out[(*o)++] = *f;
	}
	if (quote)
		out[(*o)++] = '"';
	out[*o] = 0;
	return 0;
}

int format_mount(const struct bind_spec *b, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	if (put_field(out, len, &o, "type", "bind") < 0 || put_field(out, len, &o, "src", b->src) < 0 ||
	    put_field(out, len, &o, "dst", b->dst) < 0)
		return -1;
	if (b->ro) {
		if (o + 4 >= len)
			return -1;
		strcpy(out + o, ",ro");
		o += 3;
	}
	if (b->noexec) {
		if (o + 8 >= len)
			return -1;
		strcpy(out + o, ",noexec");
	}
	return 0;
}
