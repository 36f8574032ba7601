/* A bounded JSON reader on jsmn. Input from registries is hostile: the
 * caller fixes the byte, token and nesting limits; duplicate keys in an
 * object, invalid escapes and control characters are refused. */
#ifndef KERN_JSON_H
#define KERN_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifndef KERN_JSON_IMPL
#define JSMN_HEADER
#endif
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

struct json {
	const char *js;
	size_t len;
	jsmntok_t *tok;
	int ntok;
};

/* Parse js[0..len) into j (tokens malloc'd). Returns 0, or -1 with a short
 * reason in *why: too large, too deep, invalid, duplicate key. */
int json_parse(struct json *j, const char *js, size_t len, size_t max_bytes, int max_depth,
	       const char **why);
void json_free(struct json *j);

/* Token index just past the subtree rooted at i. */
int json_skip(const struct json *j, int i);
/* Value token of key in object obj, or -1. */
int json_get(const struct json *j, int obj, const char *key);
/* Element idx of array arr, or -1. */
int json_elem(const struct json *j, int arr, int idx);
int json_is_string(const struct json *j, int i);
int json_is_object(const struct json *j, int i);
int json_is_array(const struct json *j, int i);
/* Decode string token i into out (UTF-8, NUL-terminated). -1 if not a
 * string, too long, or it decodes to a NUL. */
int json_string(const struct json *j, int i, char *out, size_t len);
/* Same, malloc'd; max bounds the decoded length. */
char *json_strdup(const struct json *j, int i, size_t max);
/* Non-negative integer primitive. */
int json_u64(const struct json *j, int i, uint64_t *out);
/* 1 if the string token i equals s exactly (after decoding). */
int json_streq(const struct json *j, int i, const char *s);

/* Append s to out as a JSON string literal (with quotes); returns bytes
 * written or -1 if it does not fit. */
int json_quote(const char *s, char *out, size_t len);

#endif
