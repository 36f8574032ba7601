/* from_argv() and to_argv() over a step's flag table (flags.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/parse.h"
#include "steps/flags.h"

#define FIELD(cfg, off) ((char *)(cfg) + (off))
#define CFIELD(cfg, off) ((const char *)(cfg) + (off))

static int set_val(const struct flag *f)
{
	return f->val ? f->val : 1;
}

static const struct flag *lookup(const struct flag_table *t, const char *word, size_t n)
{
	for (int i = 0; i < t->nflags; i++) {
		const struct flag *f = &t->flags[i];
		if ((strlen(f->name) == n && !strncmp(f->name, word, n)) ||
		    (f->alias && strlen(f->alias) == n && !strncmp(f->alias, word, n)))
			return f;
	}
	return NULL;
}

/* The array of a list: in the config, or where it points. */
static char *list_base(const struct flag *f, void *cfg)
{
	return f->indirect ? *(char **)(void *)FIELD(cfg, f->off) : FIELD(cfg, f->off);
}

static const char *clist_base(const struct flag *f, const void *cfg)
{
	return f->indirect ? *(const char *const *)(const void *)CFIELD(cfg, f->off) : CFIELD(cfg, f->off);
}

static int add_item(const struct flag *f, void *cfg, const char *v, struct flag_error *e)
{
	int *n = (int *)FIELD(cfg, f->count);
	char *base = list_base(f, cfg);
	if (*n >= f->max_items || !base) {
		e->kind = FLAG_TOOMANY;
		return -1;
	}
	if (f->elem) {
		if (f->parse(v, base + (size_t)*n * f->elem, &e->why) < 0)
			return -1;
	} else {
		if (f->check && f->check(v, &e->why) < 0)
			return -1;
		((const char **)(void *)base)[*n] = v;
	}
	if (f->tags)
		((int *)(void *)FIELD(cfg, f->tags - 1))[*n] = f->tag;
	(*n)++;
	return 0;
}

static int word_index(const struct flag *f, const char *v, struct flag_error *e)
{
	size_t used = 0;
	for (int i = 0; f->words[i]; i++)
		if (!strcmp(f->words[i], v))
			return i;
	used = (size_t)snprintf(e->whybuf, sizeof e->whybuf, "one of");
	for (int i = 0; f->words[i] && used < sizeof e->whybuf; i++)
		used += (size_t)snprintf(e->whybuf + used, sizeof e->whybuf - used, "%s %s",
					 i ? "," : "", f->words[i]);
	e->why = e->whybuf;
	return -1;
}

/* Store v in f's field: 0, or -1 with e->kind set. */
static int set_value(const struct flag *f, void *cfg, const char *v, struct flag_error *e)
{
	char *p = FIELD(cfg, f->off);
	unsigned long long ull;
	uint64_t u;
	char *end;
	int i;

	e->kind = FLAG_BADVALUE;
	switch (f->kind) {
	case FLAG_STR:
		if (f->check && f->check(v, &e->why) < 0)
			return -1;
		*(const char **)(void *)p = v;
		return 0;
	case FLAG_WORD:
		if ((i = word_index(f, v, e)) < 0)
			return -1;
		*(int *)(void *)p = i;
		return 0;
	case FLAG_INT:
	case FLAG_U64:
		if (parse_u64(v, &ull) < 0 || ull < f->min || (f->max && ull > f->max))
			return -1;
		if (f->kind == FLAG_INT)
			*(int *)(void *)p = (int)ull;
		else
			*(uint64_t *)(void *)p = ull;
		return 0;
	case FLAG_SIZE:
		if (parse_size(v, 1, &u) < 0 || u < f->min)
			return -1;
		*(uint64_t *)(void *)p = u;
		return 0;
	case FLAG_CPUS:
		if (parse_cpus(v, &u) < 0)
			return -1;
		*(uint64_t *)(void *)p = u;
		return 0;
	case FLAG_SECONDS:
		if (parse_seconds(v, &ull) < 0)
			return -1;
		*(unsigned long long *)(void *)p = ull;
		return 0;
	case FLAG_HEX:
		if (!*v || strspn(v, "0123456789abcdefABCDEF") != strlen(v) || strlen(v) > 16)
			return -1;
		u = strtoull(v, &end, 16);
		*(uint64_t *)(void *)p = u;
		return 0;
	case FLAG_LIST:
		return add_item(f, cfg, v, e);
	case FLAG_SET:
		break;
	}
	return -1;
}

int from_argv(const struct flag_table *t, int argc, char **argv, void *cfg, struct flag_error *e)
{
	uint64_t seen = 0;
	int npos = 0, i;

	memset(e, 0, sizeof *e);
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *eq = NULL, *v;
		if (a[0] != '-' || !a[1]) {
			if (npos >= t->npos) {
				e->kind = FLAG_EXTRA;
				e->arg = a;
				return -1;
			}
			*(const char **)(void *)FIELD(cfg, t->pos[npos++]) = a;
			continue;
		}
		if (a[1] == '-')
			eq = strchr(a, '=');
		const struct flag *f = lookup(t, a, eq ? (size_t)(eq - a) : strlen(a));
		e->arg = a;
		if (!f || (f->kind == FLAG_SET && eq)) {
			e->kind = FLAG_UNKNOWN;
			return -1;
		}
		e->flag = f;
		seen |= 1ULL << (f - t->flags);
		if (f->kind == FLAG_SET) {
			*(int *)(void *)FIELD(cfg, f->off) = set_val(f);
			continue;
		}
		if (eq)
			v = eq + 1;
		else if (i + 1 < argc && strcmp(argv[i + 1], "--") != 0)
			v = argv[++i];
		else {
			e->kind = FLAG_NOVALUE;
			return -1;
		}
		e->value = v;
		if (set_value(f, cfg, v, e) < 0)
			return -1;
		if (f->given)
			*(int *)(void *)FIELD(cfg, f->given - 1) = 1;
	}
	for (int k = 0; k < t->nflags; k++)
		if (t->flags[k].required && !(seen & (1ULL << k))) {
			memset(e, 0, sizeof *e);
			e->kind = FLAG_MISSING;
			e->flag = &t->flags[k];
			e->arg = t->flags[k].name;
			return -1;
		}
	memset(e, 0, sizeof *e);
	return i;
}

/* ---- to_argv ---- */

static int differs(const struct flag *f, const void *cfg, const void *def)
{
	const char *a = CFIELD(cfg, f->off), *b = CFIELD(def, f->off);
	switch (f->kind) {
	case FLAG_STR: {
		const char *x = *(const char *const *)(const void *)a;
		const char *y = *(const char *const *)(const void *)b;
		return x && (!y || strcmp(x, y) != 0);
	}
	case FLAG_SET:
	case FLAG_WORD:
	case FLAG_INT:
		return *(const int *)(const void *)a != *(const int *)(const void *)b;
	case FLAG_SECONDS:
		return *(const unsigned long long *)(const void *)a !=
		       *(const unsigned long long *)(const void *)b;
	case FLAG_U64:
	case FLAG_SIZE:
	case FLAG_CPUS:
	case FLAG_HEX:
		return *(const uint64_t *)(const void *)a != *(const uint64_t *)(const void *)b;
	case FLAG_LIST:
		break;
	}
	return 0;
}

static int push2(struct strv *out, const char *flag, const char *v)
{
	return strv_push(out, flag) < 0 || (v && strv_push(out, v) < 0) ? -1 : 0;
}

static int format_value(const struct flag *f, const void *cfg, char *buf, size_t len)
{
	const char *p = CFIELD(cfg, f->off);
	switch (f->kind) {
	case FLAG_STR:
		snprintf(buf, len, "%s", *(const char *const *)(const void *)p);
		return 0;
	case FLAG_WORD:
		snprintf(buf, len, "%s", f->words[*(const int *)(const void *)p]);
		return 0;
	case FLAG_INT:
		snprintf(buf, len, "%d", *(const int *)(const void *)p);
		return 0;
	case FLAG_SECONDS:
		snprintf(buf, len, "%llu", *(const unsigned long long *)(const void *)p);
		return 0;
	case FLAG_U64:
	case FLAG_SIZE:
		snprintf(buf, len, "%" PRIu64, *(const uint64_t *)(const void *)p);
		return 0;
	case FLAG_CPUS:
		flag_cpus_text(*(const uint64_t *)(const void *)p, buf, len);
		return 0;
	case FLAG_HEX:
		snprintf(buf, len, "%016" PRIx64, *(const uint64_t *)(const void *)p);
		return 0;
	case FLAG_SET:
	case FLAG_LIST:
		break;
	}
	return -1;
}

/* Every item of the list at f->off, each under the flag that added it. */
static int list_to_argv(const struct flag_table *t, const struct flag *f, const void *cfg,
			struct strv *out, char *buf, size_t len)
{
	int n = *(const int *)(const void *)CFIELD(cfg, f->count);
	const char *base = clist_base(f, cfg);
	for (int i = 0; i < n; i++) {
		const struct flag *by = f;
		if (f->tags) {
			int tag = ((const int *)(const void *)CFIELD(cfg, f->tags - 1))[i];
			for (int k = 0; k < t->nflags; k++)
				if (t->flags[k].kind == FLAG_LIST && t->flags[k].off == f->off &&
				    t->flags[k].tag == tag)
					by = &t->flags[k];
		}
		const char *v;
		if (by->elem) {
			if (by->format(base + (size_t)i * by->elem, buf, len) < 0)
				return -1;
			v = buf;
		} else {
			v = ((const char *const *)(const void *)base)[i];
		}
		if (push2(out, by->name, v) < 0)
			return -1;
	}
	return 0;
}

int to_argv(const struct flag_table *t, const void *cfg, struct strv *out)
{
	char buf[8300];
	for (int k = 0; k < t->nflags; k++) {
		const struct flag *f = &t->flags[k];
		if (f->kind == FLAG_LIST) {
			int first = 1;
			for (int j = 0; j < k; j++)
				first &= !(t->flags[j].kind == FLAG_LIST && t->flags[j].off == f->off);
			if (first && list_to_argv(t, f, cfg, out, buf, sizeof buf) < 0)
				return -1;
			continue;
		}
		if (f->kind == FLAG_SET) {
			if (*(const int *)(const void *)CFIELD(cfg, f->off) == set_val(f) &&
			    differs(f, cfg, t->defaults) && strv_push(out, f->name) < 0)
				return -1;
			continue;
		}
		int print;
		if (f->given)
			print = *(const int *)(const void *)CFIELD(cfg, f->given - 1);
		else if (f->required)
			print = 1;
		else
			print = differs(f, cfg, t->defaults);
		if (f->kind == FLAG_STR && !*(const char *const *)(const void *)CFIELD(cfg, f->off))
			print = 0;
		if (!print)
			continue;
		if (format_value(f, cfg, buf, sizeof buf) < 0 || push2(out, f->name, buf) < 0)
			return -1;
	}
	for (int i = 0; i < t->npos; i++) {
		const char *v = *(const char *const *)(const void *)CFIELD(cfg, t->pos[i]);
		if (v && strv_push(out, v) < 0)
			return -1;
	}
	return 0;
}

void flag_error_text(const struct flag_error *e, char *buf, size_t len)
{
	const char *name = e->flag ? e->flag->name : e->arg;
	switch (e->kind) {
	case FLAG_UNKNOWN:
		snprintf(buf, len, "unknown flag '%s'", e->arg);
		return;
	case FLAG_NOVALUE:
		snprintf(buf, len, "%s needs a value", name);
		return;
	case FLAG_BADVALUE:
		snprintf(buf, len, "invalid %s '%s'%s%s", name, e->value, e->why ? ": " : "",
			 e->why ? e->why : "");
		return;
	case FLAG_TOOMANY:
		snprintf(buf, len, "too many %s (at most %d)", name, e->flag ? e->flag->max_items : 0);
		return;
	case FLAG_MISSING:
		snprintf(buf, len, "%s is required", name);
		return;
	case FLAG_EXTRA:
		snprintf(buf, len, "unexpected argument '%s'", e->arg);
		return;
	}
	snprintf(buf, len, "bad arguments");
}

int step_args(const struct flag_table *t, int argc, char **argv, void *cfg)
{
	struct flag_error e;
	char msg[600];
	int i = from_argv(t, argc, argv, cfg, &e);
	if (i >= 0)
		return i;
	flag_error_text(&e, msg, sizeof msg);
	step_fatal(t, "%s", msg);
	die_hint("run '%s --help' for usage", t->step);
}

/* "STEP: <fmt's text>" into msg, a char array, from the caller's `...`. */
#define STEP_TEXT(msg, t, fmt)                                                  \
	do {                                                                    \
		va_list ap_;                                                    \
		int n_ = snprintf((msg), sizeof(msg), "%s: ", (t)->step);       \
		va_start(ap_, fmt);                                             \
		vsnprintf((msg) + n_, sizeof(msg) - (size_t)n_, (fmt), ap_);    \
		va_end(ap_);                                                    \
	} while (0)

void step_fatal(const struct flag_table *t, const char *fmt, ...)
{
	char msg[3072];
	STEP_TEXT(msg, t, fmt);
	fatal(t->area, "%s", msg);
}

void step_die(const struct flag_table *t, const char *fmt, ...)
{
	char msg[3072];
	STEP_TEXT(msg, t, fmt);
	die(t->area, "%s", msg);
}

void step_die_setup(const struct flag_table *t, const char *fmt, ...)
{
	char msg[3072];
	STEP_TEXT(msg, t, fmt);
	die_setup("%s", msg);
}

void step_die_setup_errno(const struct flag_table *t, const char *fmt, ...)
{
	int err = errno;
	char msg[3072];
	STEP_TEXT(msg, t, fmt);
	errno = err;
	die_setup_errno("%s", msg);
}

void flag_cpus_text(uint64_t micro, char *out, size_t len)
{
	snprintf(out, len, "%" PRIu64 ".%06" PRIu64, micro / 1000000, micro % 1000000);
	char *e = out + strlen(out) - 1;
	while (*e == '0')
		*e-- = 0;
	if (*e == '.')
		*e = 0;
}
