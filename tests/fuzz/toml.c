/* FZ-5 (security-tests.md §11, fuzz targets), kern.toml part: lib/base/toml.c on
 * arbitrary bytes. Property: it never crashes or over-reads (ASan, UBSan),
 * and what it accepts round-trips: written back out canonically and parsed
 * again, the document is the same. Build: make fuzz. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		if (!o->buf)
			abort();
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_string(struct out *o, const char *s)
{
	puts_(o, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			put(o, esc, 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			snprintf(esc, sizeof esc, "\\u%04x", *p);
			puts_(o, esc);
		} else {
			put(o, (const char *)p, 1);
		}
	}
	puts_(o, "\"");
}

static void put_value(struct out *o, const struct toml_value *v)
{
	switch (v->type) {
	case TOML_STRING: put_string(o, v->s); break;
	case TOML_INT:
	case TOML_FLOAT: puts_(o, v->s); break;
	case TOML_BOOL: puts_(o, v->b ? "true" : "false"); break;
	case TOML_ARRAY:
		puts_(o, "[");
		for (int i = 0; i < v->nitems; i++) {
			if (i)
				puts_(o, ", ");
			put_string(o, v->items[i]);
		}
		puts_(o, "]");
		break;
	}
}

static void write_doc(struct out *o, const struct toml_doc *d)
{
	for (int t = 0; t < d->nt; t++) {
		const struct toml_table *tb = &d->t[t];
		if (t) {
			puts_(o, tb->array ? "[[" : "[");
			puts_(o, tb->name);
			puts_(o, tb->array ? "]]\n" : "]\n");
		}
		for (int k = 0; k < tb->nkv; k++) {
			puts_(o, tb->kv[k].key);
			puts_(o, " = ");
			put_value(o, &tb->kv[k].v);
			puts_(o, "\n");
		}
	}
}

static int same_value(const struct toml_value *a, const struct toml_value *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case TOML_STRING:
	case TOML_FLOAT: return strcmp(a->s, b->s) == 0;
	case TOML_INT: return a->i == b->i;
	case TOML_BOOL: return a->b == b->b;
	case TOML_ARRAY:
		if (a->nitems != b->nitems)
			return 0;
		for (int i = 0; i < a->nitems; i++)
			if (strcmp(a->items[i], b->items[i]) != 0)
				return 0;
		return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct toml_doc d1, d2;
	struct out o = {0};
	char err[512];
	if (toml_parse("f.toml", (const char *)data, size, &d1, err, sizeof err) < 0) {
		/* A refusal always says where. */
		if (strncmp(err, "f.toml:", 7) != 0)
			abort();
		return 0;
	}
	write_doc(&o, &d1);
	if (toml_parse("f.toml", o.buf ? o.buf : "", o.len, &d2, err, sizeof err) < 0) {
		fprintf(stderr, "canonical form refused: %s\n%s", err, o.buf);
		abort();
	}
	if (d1.nt != d2.nt)
		abort();
	for (int t = 0; t < d1.nt; t++) {
		if (strcmp(d1.t[t].name, d2.t[t].name) != 0 || d1.t[t].array != d2.t[t].array ||
		    d1.t[t].nkv != d2.t[t].nkv)
			abort();
		for (int k = 0; k < d1.t[t].nkv; k++)
			if (strcmp(d1.t[t].kv[k].key, d2.t[t].kv[k].key) != 0 ||
			    !same_value(&d1.t[t].kv[k].v, &d2.t[t].kv[k].v))
				abort();
	}
	toml_free(&d1);
	toml_free(&d2);
	free(o.buf);
	return 0;
}
