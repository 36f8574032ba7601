/* The kern.toml subset of TOML (toml.h). Hand-written on purpose: Debian has
 * no TOML library in kern's dependency set and the subset is small; being
 * strict (rejecting, with a position, what it does not understand) is the
 * point. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/toml.h"

#define MAX_TABLES 4096
#define MAX_KEYS 4096
#define MAX_ITEMS 4096
#define MAX_STRING 65536
#define MAX_KEY 128

struct cur {
	const char *p, *end, *line_start;
	int line;
	const char *path;
	char *err;
	size_t errlen;
	struct toml_doc *doc;
};

static int column(const char *line_start, const char *at)
{
	int col = 1;
	for (const char *q = line_start; q < at; q++)
		if (((unsigned char)*q & 0xc0) != 0x80)
			col++;
	return col;
}

static int fail_at(struct cur *c, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(struct cur *c, const char *at, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->errlen, "%s:%d:%d: ", c->path, c->line, column(c->line_start, at));
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Whole-file check first: valid UTF-8, no NUL, no control characters but
 * tab and line ends (CR only before LF). */
static int check_bytes(struct cur *c)
{
	const unsigned char *p = (const unsigned char *)c->p, *end = (const unsigned char *)c->end;
	while (p < end) {
		unsigned char b = *p;
		const char *at = (const char *)p;
		if (b == '\n') {
			c->line++;
			c->line_start = at + 1;
			p++;
			continue;
		}
		if (b == '\r' && p + 1 < end && p[1] == '\n') {
			p++;
			continue;
		}
		if (b < 0x20 && b != '\t')
			return fail_at(c, at, "control character 0x%02x is not allowed", b);
		if (b == 0x7f)
			return fail_at(c, at, "control character 0x7f is not allowed");
		if (b < 0x80) {
			p++;
			continue;
		}
		int n = (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
		if (!n || end - p < n)
			return fail_at(c, at, "invalid UTF-8");
		for (int i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return fail_at(c, at, "invalid UTF-8");
			cp = (cp << 6) | (p[i] & 0x3fu);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return fail_at(c, at, "invalid UTF-8");
		p += n;
	}
	c->line = 1;
	c->line_start = c->p;
	return 0;
}

static void skip_ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static int at_newline(struct cur *c)
{
	return c->p < c->end && (*c->p == '\n' || (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n'));
}

static void take_newline(struct cur *c)
{
	if (*c->p == '\r')
		c->p++;
	c->p++;
	c->line++;
	c->line_start = c->p;
}

static void skip_comment(struct cur *c)
{
	if (c->p < c->end && *c->p == '#')
		while (c->p < c->end && *c->p != '\n' && *c->p != '\r')
			c->p++;
}

/* Spaces, comments and line ends (inside arrays). */
static void skip_blank(struct cur *c)
{
	for (;;) {
		skip_ws(c);
		skip_comment(c);
		if (!at_newline(c))
			return;
		take_newline(c);
	}
}

static int end_of_line(struct cur *c, const char *what)
{
	skip_ws(c);
	skip_comment(c);
	if (c->p >= c->end)
		return 0;
	if (at_newline(c)) {
		take_newline(c);
		return 0;
	}
	return fail_at(c, c->p, "expected the end of the line after %s", what);
}

static int bare_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '-';
}

static int bare_key(struct cur *c, char *out, const char *what)
{
	const char *start = c->p;
	if (c->p < c->end && (*c->p == '"' || *c->p == '\''))
		return fail_at(c, c->p, "quoted %s are not supported", what);
	while (c->p < c->end && bare_char(*c->p))
		c->p++;
	size_t n = (size_t)(c->p - start);
	if (n == 0)
		return fail_at(c, start, "expected %s", what[0] == 'k' ? "a key" : "a table name");
	if (n >= MAX_KEY)
		return fail_at(c, start, "name longer than %d bytes", MAX_KEY - 1);
	memcpy(out, start, n);
	out[n] = 0;
	skip_ws(c);
	if (c->p < c->end && *c->p == '.')
		return fail_at(c, c->p, "dotted %s are not supported", what);
	return 0;
}

static void put_utf8(char *out, size_t *o, uint32_t cp)
{
	if (cp < 0x80)
		out[(*o)++] = (char)cp;
	else if (cp < 0x800) {
		out[(*o)++] = (char)(0xc0 | (cp >> 6));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xe0 | (cp >> 12));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*o)++] = (char)(0xf0 | (cp >> 18));
		out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* A basic string; c->p at the opening quote. */
static int basic_string(struct cur *c, char **out)
{
	const char *open = c->p;
	size_t o = 0;
	char *buf;
	if (c->end - c->p >= 3 && c->p[1] == '"' && c->p[2] == '"')
		return fail_at(c, c->p, "multi-line strings are not supported");
	if (!(buf = malloc(MAX_STRING + 8)))
		return fail_at(c, c->p, "out of memory");
	c->p++;
	for (;;) {
		if (c->p >= c->end || *c->p == '\n' || *c->p == '\r') {
			free(buf);
			return fail_at(c, open, "unterminated string");
		}
		if (o >= MAX_STRING) {
			free(buf);
			return fail_at(c, open, "string longer than %d bytes", MAX_STRING);
		}
		char ch = *c->p;
		if (ch == '"') {
			c->p++;
			break;
		}
		if (ch != '\\') {
			buf[o++] = ch;
			c->p++;
			continue;
		}
		const char *esc = c->p;
		char e = c->p + 1 < c->end ? c->p[1] : 0;
		c->p += 2;
		switch (e) {
		case 'b': buf[o++] = '\b'; break;
		case 't': buf[o++] = '\t'; break;
		case 'n': buf[o++] = '\n'; break;
		case 'f': buf[o++] = '\f'; break;
		case 'r': buf[o++] = '\r'; break;
		case '"': buf[o++] = '"'; break;
		case '\\': buf[o++] = '\\'; break;
		case 'u':
		case 'U': {
			int digits = e == 'u' ? 4 : 8;
			uint32_t cp = 0;
			for (int i = 0; i < digits; i++) {
				int h = c->p < c->end ? hexval(*c->p) : -1;
				if (h < 0) {
					free(buf);
					return fail_at(c, esc, "\\%c needs %d hex digits", e, digits);
				}
				cp = cp * 16 + (uint32_t)h;
				c->p++;
			}
			if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
				free(buf);
				return fail_at(c, esc, "\\%c escape is not a usable character", e);
			}
			put_utf8(buf, &o, cp);
			break;
		}
		default:
			free(buf);
			return fail_at(c, esc, "invalid escape in string");
		}
	}
	buf[o] = 0;
	*out = buf;
	return 0;
}

/* Digits with single underscores between them; returns the count. */
static int digit_run(const char **q, const char *end, char *clean, size_t *o)
{
	int n = 0;
	while (*q < end) {
		if (**q >= '0' && **q <= '9') {
			clean[(*o)++] = **q;
			n++;
			(*q)++;
		} else if (**q == '_' && n > 0 && *q + 1 < end && (*q)[1] >= '0' && (*q)[1] <= '9') {
			(*q)++;
		} else {
			break;
		}
	}
	return n;
}

static int number(struct cur *c, struct toml_value *v)
{
	const char *start = c->p, *q = c->p, *tok_end = c->p;
	char clean[128];
	size_t o = 0;
	int is_float = 0;
	while (tok_end < c->end && (bare_char(*tok_end) || *tok_end == '+' || *tok_end == '.' ||
				    *tok_end == ':'))
		tok_end++;
	if (tok_end - start >= 100)
		return fail_at(c, start, "number too long");
	if (*q == '+' || *q == '-')
		clean[o++] = *q++;
	const char *int_start = q;
	int nd = digit_run(&q, tok_end, clean, &o);
	if (nd == 0)
		return fail_at(c, start, "invalid number '%.*s'", (int)(tok_end - start), start);
	if (nd > 1 && *int_start == '0') {
		if (int_start[1] == 'x' || int_start[1] == 'o' || int_start[1] == 'b')
			return fail_at(c, start, "only decimal numbers are supported");
		return fail_at(c, start, "leading zeros are not allowed in '%.*s'", (int)(tok_end - start),
			       start);
	}
	if (nd == 1 && *int_start == '0' && q < tok_end && (*q == 'x' || *q == 'o' || *q == 'b'))
		return fail_at(c, start, "only decimal numbers are supported");
	if (q < tok_end && *q == '.') {
		clean[o++] = *q++;
		if (digit_run(&q, tok_end, clean, &o) == 0)
			return fail_at(c, start, "invalid number '%.*s'", (int)(tok_end - start), start);
		is_float = 1;
	}
	if (q < tok_end && (*q == 'e' || *q == 'E')) {
		clean[o++] = *q++;
		if (q < tok_end && (*q == '+' || *q == '-'))
			clean[o++] = *q++;
		if (digit_run(&q, tok_end, clean, &o) == 0)
			return fail_at(c, start, "invalid number '%.*s'", (int)(tok_end - start), start);
		is_float = 1;
	}
	if (q != tok_end)
		return fail_at(c, start, "invalid value '%.*s'", (int)(tok_end - start), start);
	clean[o] = 0;
	c->p = tok_end;
	v->s = strdup(clean);
	if (!v->s)
		return fail_at(c, start, "out of memory");
	if (is_float) {
		v->type = TOML_FLOAT;
		return 0;
	}
	errno = 0;
	v->type = TOML_INT;
	v->i = strtoll(clean, NULL, 10);
	if (errno == ERANGE)
		return fail_at(c, start, "integer out of range");
	return 0;
}

static int array(struct cur *c, struct toml_value *v)
{
	v->type = TOML_ARRAY;
	c->p++;
	for (;;) {
		skip_blank(c);
		if (c->p >= c->end)
			return fail_at(c, c->p, "unterminated array");
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		if (*c->p != '"')
			return fail_at(c, c->p, "arrays hold \"strings\" only");
		if (v->nitems >= MAX_ITEMS)
			return fail_at(c, c->p, "more than %d items in an array", MAX_ITEMS);
		char **grown = realloc(v->items, sizeof *grown * (size_t)(v->nitems + 1));
		if (!grown)
			return fail_at(c, c->p, "out of memory");
		v->items = grown;
		if (basic_string(c, &v->items[v->nitems]) < 0)
			return -1;
		v->nitems++;
		skip_blank(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return 0;
		}
		return fail_at(c, c->p, "expected ',' or ']' in the array");
	}
}

static int word_is(struct cur *c, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(c->end - c->p) >= n && strncmp(c->p, w, n) == 0 &&
	       (c->p + n == c->end || !bare_char(c->p[n]));
}

static int value(struct cur *c, struct toml_value *v)
{
	v->line = c->line;
	v->col = column(c->line_start, c->p);
	if (c->p >= c->end || at_newline(c) || *c->p == '#')
		return fail_at(c, c->p, "expected a value after '='");
	switch (*c->p) {
	case '"':
		v->type = TOML_STRING;
		return basic_string(c, &v->s);
	case '\'':
		return fail_at(c, c->p, "literal strings ('...') are not supported; use \"...\"");
	case '[':
		return array(c, v);
	case '{':
		return fail_at(c, c->p, "inline tables are not supported");
	default:
		break;
	}
	if (word_is(c, "true") || word_is(c, "false")) {
		v->type = TOML_BOOL;
		v->b = *c->p == 't';
		c->p += v->b ? 4 : 5;
		return 0;
	}
	if ((*c->p >= '0' && *c->p <= '9') || *c->p == '+' || *c->p == '-')
		return number(c, v);
	return fail_at(c, c->p, "expected a value: \"string\", number, true, false or [\"list\"]");
}

static struct toml_table *add_table(struct cur *c, const char *name, int is_array, int line,
				    int col)
{
	struct toml_doc *d = c->doc;
	if (d->nt >= MAX_TABLES) {
		fail_at(c, c->p, "more than %d tables", MAX_TABLES);
		return NULL;
	}
	struct toml_table *grown = realloc(d->t, sizeof *grown * (size_t)(d->nt + 1));
	if (!grown) {
		fail_at(c, c->p, "out of memory");
		return NULL;
	}
	d->t = grown;
	struct toml_table *t = &d->t[d->nt];
	memset(t, 0, sizeof *t);
	if (!(t->name = strdup(name))) {
		fail_at(c, c->p, "out of memory");
		return NULL;
	}
	t->array = is_array;
	t->line = line;
	t->col = col;
	d->nt++;
	return t;
}

static int header(struct cur *c)
{
	const char *open = c->p;
	int line = c->line, col = column(c->line_start, c->p), is_array = 0;
	char name[MAX_KEY];
	c->p++;
	if (c->p < c->end && *c->p == '[') {
		is_array = 1;
		c->p++;
	}
	skip_ws(c);
	if (bare_key(c, name, "table names") < 0)
		return -1;
	if (c->p >= c->end || *c->p != ']' ||
	    (is_array && (c->p + 1 >= c->end || c->p[1] != ']')))
		return fail_at(c, c->p, "expected '%s' to close the table header", is_array ? "]]" : "]");
	c->p += is_array ? 2 : 1;
	for (int i = 1; i < c->doc->nt; i++) {
		struct toml_table *t = &c->doc->t[i];
		if (strcmp(t->name, name) != 0)
			continue;
		if (t->array != is_array)
			return fail_at(c, open, "[%s%s%s] conflicts with [%s%s%s] at line %d",
				       is_array ? "[" : "", name, is_array ? "]" : "", t->array ? "[" : "",
				       name, t->array ? "]" : "", t->line);
		if (!is_array)
			return fail_at(c, open, "table [%s] is defined twice (first at line %d)", name,
				       t->line);
	}
	if (!add_table(c, name, is_array, line, col))
		return -1;
	return end_of_line(c, "the table header");
}

static int keyval(struct cur *c)
{
	struct toml_table *t = &c->doc->t[c->doc->nt - 1];
	const char *kp = c->p;
	int line = c->line, col = column(c->line_start, c->p);
	char key[MAX_KEY];
	if (bare_key(c, key, "keys") < 0)
		return -1;
	if (c->p >= c->end || *c->p != '=')
		return fail_at(c, c->p, "expected '=' after the key");
	c->p++;
	skip_ws(c);
	for (int i = 0; i < t->nkv; i++)
		if (strcmp(t->kv[i].key, key) == 0)
			return fail_at(c, kp, "duplicate key '%s' (first at line %d)", key, t->kv[i].line);
	if (t->nkv >= MAX_KEYS)
		return fail_at(c, kp, "more than %d keys in a table", MAX_KEYS);
	struct toml_kv *grown = realloc(t->kv, sizeof *grown * (size_t)(t->nkv + 1));
	if (!grown)
		return fail_at(c, kp, "out of memory");
	t->kv = grown;
	struct toml_kv *kv = &t->kv[t->nkv];
	memset(kv, 0, sizeof *kv);
	if (!(kv->key = strdup(key)))
		return fail_at(c, kp, "out of memory");
	kv->line = line;
	kv->col = col;
	t->nkv++;
	if (value(c, &kv->v) < 0)
		return -1;
	return end_of_line(c, "the value");
}

int toml_parse(const char *path, const char *text, size_t len, struct toml_doc *doc, char *err,
	       size_t errlen)
{
	struct cur c = {text, text + len, text, 1, path, err, errlen, doc};
	memset(doc, 0, sizeof *doc);
	if (err && errlen)
		err[0] = 0;
	if (len > TOML_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, TOML_MAX_BYTES);
		return -1;
	}
	if (check_bytes(&c) < 0 || !add_table(&c, "", 0, 1, 1))
		goto bad;
	while (c.p < c.end) {
		skip_ws(&c);
		skip_comment(&c);
		if (c.p >= c.end)
			break;
		if (at_newline(&c)) {
			take_newline(&c);
			continue;
		}
		if (*c.p == '[') {
			if (header(&c) < 0)
				goto bad;
		} else if (keyval(&c) < 0) {
			goto bad;
		}
	}
	return 0;
bad:
	toml_free(doc);
	return -1;
}

int toml_load(const char *path, struct toml_doc *doc, char *err, size_t errlen)
{
	struct stat st = {0};
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	memset(doc, 0, sizeof *doc);
	if (fd < 0) {
		int saved = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(saved));
		errno = saved;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > TOML_MAX_BYTES) {
		const char *why = !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 1 MiB";
		snprintf(err, errlen, "%s: %s", path, why);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	int rc = toml_parse(path, buf, got, doc, err, errlen);
	free(buf);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

static void free_value(struct toml_value *v)
{
	free(v->s);
	for (int i = 0; i < v->nitems; i++)
		free(v->items[i]);
	free(v->items);
}

void toml_free(struct toml_doc *doc)
{
	for (int i = 0; i < doc->nt; i++) {
		struct toml_table *t = &doc->t[i];
		for (int k = 0; k < t->nkv; k++) {
			free(t->kv[k].key);
			free_value(&t->kv[k].v);
		}
		free(t->kv);
		free(t->name);
	}
	free(doc->t);
	memset(doc, 0, sizeof *doc);
}

const struct toml_kv *toml_get(const struct toml_table *t, const char *key)
{
	for (int i = 0; i < t->nkv; i++)
		if (strcmp(t->kv[i].key, key) == 0)
			return &t->kv[i];
	return NULL;
}
