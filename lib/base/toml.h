/* A strict reader for the part of TOML that kern.toml uses: comments,
 * `[table]`, `[[array-of-tables]]`, and `key = value` where value is a
 * basic "string", a decimal integer, a float, true/false, or an array of
 * strings. Anything else (dotted or quoted keys, inline tables, literal or
 * multi-line strings, dates, hex numbers, duplicate keys or tables) is
 * refused with `path:line:col: what`. Meaning is the caller's business. */
#ifndef KERN_TOML_H
#define KERN_TOML_H

#include <stddef.h>

#define TOML_MAX_BYTES (1 << 20)

enum toml_type { TOML_STRING, TOML_INT, TOML_FLOAT, TOML_BOOL, TOML_ARRAY };

struct toml_value {
	enum toml_type type;
	/* STRING: the decoded text. INT, FLOAT: the literal as written, with
	 * underscores removed, so callers can apply their own grammar. */
	char *s;
	long long i;		/* INT */
	int b;			/* BOOL */
	char **items;		/* ARRAY: strings */
	int nitems;
	int line, col;
};

struct toml_kv {
	char *key;
	struct toml_value v;
	int line, col;
};

struct toml_table {
	char *name;		/* "" for the keys before any header */
	int array;		/* declared with [[name]] */
	struct toml_kv *kv;
	int nkv;
	int line, col;
};

struct toml_doc {
	struct toml_table *t;	/* t[0] is the top level */
	int nt;
};

/* Parse text[0..len). Returns 0, or -1 with err = "path:line:col: what". */
int toml_parse(const char *path, const char *text, size_t len, struct toml_doc *doc, char *err,
	       size_t errlen);
/* Read a regular file of at most TOML_MAX_BYTES and parse it. Returns 0,
 * -1 with err set (a parse or read error; errno is ENOENT when the file does
 * not exist). */
int toml_load(const char *path, struct toml_doc *doc, char *err, size_t errlen);
void toml_free(struct toml_doc *doc);

/* The value of key in t, or NULL. */
const struct toml_kv *toml_get(const struct toml_table *t, const char *key);

#endif
