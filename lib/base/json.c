#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KERN_JSON_IMPL
#define JSMN_STATIC
#include "base/json.h"

/* jsmn itself has no nesting limit; a linear pre-scan keeps 100,000 `[`
 * from costing anything. */
static int depth_ok(const char *js, size_t len, int max_depth)
{
	int depth = 0, in_str = 0;
	for (size_t i = 0; i < len; i++) {
		char c = js[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return 0;
		} else if (c == ']' || c == '}')
			depth--;
	}
	return 1;
}

static int key_cmp(const void *a, const void *b, void *ctx)
{
	const struct json *j = ctx;
	const jsmntok_t *x = &j->tok[*(const int *)a], *y = &j->tok[*(const int *)b];
	int lx = x->end - x->start, ly = y->end - y->start;
	int c = memcmp(j->js + x->start, j->js + y->start, (size_t)(lx < ly ? lx : ly));
	return c ? c : lx - ly;
}

/* jsmn's strict mode still lets some malformed objects through
 * ({"a":"b","c"}: a key without a value). With parent links the shape is
 * checkable: object members are string keys holding exactly one value,
 * and nothing else sits directly in an object. */
static int structure_ok(const struct json *j)
{
	for (int i = 0; i < j->ntok; i++) {
		const jsmntok_t *t = &j->tok[i];
		int in_object = t->parent >= 0 && t->parent < j->ntok &&
				j->tok[t->parent].type == JSMN_OBJECT;
		int is_key = t->type == JSMN_STRING && t->size == 1;
		if (in_object != is_key)
			return 0;
		if (t->type == JSMN_STRING && t->size > 1)
			return 0;
	}
	return 1;
}

static int no_duplicate_keys(const struct json *j)
{
	int *keys = malloc(sizeof(int) * (size_t)(j->ntok + 1));
	int ok = 1;
	if (!keys)
		return 0;
	for (int o = 0; o < j->ntok && ok; o++) {
		if (j->tok[o].type != JSMN_OBJECT || j->tok[o].size < 2)
			continue;
		int n = 0, k = o + 1;
		for (int m = 0; m < j->tok[o].size; m++) {
			if (k >= j->ntok) {
				ok = 0;
				break;
			}
			keys[n++] = k;
			k = json_skip(j, k + 1);
		}
		qsort_r(keys, (size_t)n, sizeof(int), key_cmp, (void *)j);
		for (int m = 1; m < n; m++)
			if (key_cmp(&keys[m - 1], &keys[m], (void *)j) == 0)
				ok = 0;
	}
	free(keys);
	return ok;
}

int json_parse(struct json *j, const char *js, size_t len, size_t max_bytes, int max_depth,
	       const char **why)
{
	jsmn_parser p;
	int n;
	memset(j, 0, sizeof *j);
	if (len > max_bytes) {
		*why = "too large";
		return -1;
	}
	if (!depth_ok(js, len, max_depth)) {
		*why = "nested too deeply";
		return -1;
	}
	jsmn_init(&p);
	n = jsmn_parse(&p, js, len, NULL, 0);
	if (n <= 0) {
		*why = "invalid JSON";
		return -1;
	}
	j->tok = calloc((size_t)n, sizeof(jsmntok_t));
	if (!j->tok) {
		*why = "out of memory";
		return -1;
	}
	jsmn_init(&p);
	j->ntok = jsmn_parse(&p, js, len, j->tok, (unsigned)n);
	j->js = js;
	j->len = len;
	if (j->ntok != n || json_skip(j, 0) != n) {
		/* Trailing content after the first value is not JSON either. */
		json_free(j);
		*why = "invalid JSON";
		return -1;
	}
	for (size_t i = (size_t)j->tok[0].end; i < len; i++)
		if (js[i] != ' ' && js[i] != '\n' && js[i] != '\r' && js[i] != '\t') {
			json_free(j);
			*why = "invalid JSON";
			return -1;
		}
	if (!structure_ok(j)) {
		json_free(j);
		*why = "invalid JSON";
		return -1;
	}
	if (!no_duplicate_keys(j)) {
		json_free(j);
		*why = "duplicate key";
		return -1;
	}
	return 0;
}

void json_free(struct json *j)
{
	free(j->tok);
	j->tok = NULL;
	j->ntok = 0;
}

int json_skip(const struct json *j, int i)
{
	/* Iterative: count the children still owed instead of recursing. */
	int owed = 1;
	while (owed > 0 && i < j->ntok) {
		const jsmntok_t *t = &j->tok[i++];
		owed--;
		if (t->type == JSMN_OBJECT)
			owed += 2 * t->size;
		else if (t->type == JSMN_ARRAY)
			owed += t->size;
	}
	return i;
}

int json_get(const struct json *j, int obj, const char *key)
{
	if (obj < 0 || obj >= j->ntok || j->tok[obj].type != JSMN_OBJECT)
		return -1;
	int k = obj + 1;
	for (int m = 0; m < j->tok[obj].size; m++) {
		if (json_streq(j, k, key))
			return k + 1;
		k = json_skip(j, k + 1);
	}
	return -1;
}

int json_elem(const struct json *j, int arr, int idx)
{
	if (arr < 0 || arr >= j->ntok || j->tok[arr].type != JSMN_ARRAY || idx < 0 ||
	    idx >= j->tok[arr].size)
		return -1;
	int k = arr + 1;
	for (int m = 0; m < idx; m++)
		k = json_skip(j, k);
	return k;
}

int json_is_string(const struct json *j, int i)
{
	return i >= 0 && i < j->ntok && j->tok[i].type == JSMN_STRING;
}

int json_is_object(const struct json *j, int i)
{
	return i >= 0 && i < j->ntok && j->tok[i].type == JSMN_OBJECT;
}

int json_is_array(const struct json *j, int i)
{
	return i >= 0 && i < j->ntok && j->tok[i].type == JSMN_ARRAY;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int hex4(const char *s, const char *end, unsigned *out)
{
	unsigned v = 0;
	if (end - s < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hexval(s[i]);
		if (h < 0)
			return -1;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return 0;
}

int json_string(const struct json *j, int i, char *out, size_t len)
{
	if (!json_is_string(j, i) || len == 0)
		return -1;
	const char *s = j->js + j->tok[i].start, *end = j->js + j->tok[i].end;
	size_t o = 0;
	while (s < end) {
		unsigned cp;
		char buf[4];
		size_t n = 0;
		if ((unsigned char)*s < 0x20)
			return -1;
		if (*s != '\\') {
			buf[n++] = *s++;
		} else {
			s++;
			if (s >= end)
				return -1;
			switch (*s++) {
			case '"': buf[n++] = '"'; break;
			case '\\': buf[n++] = '\\'; break;
			case '/': buf[n++] = '/'; break;
			case 'b': buf[n++] = '\b'; break;
			case 'f': buf[n++] = '\f'; break;
			case 'n': buf[n++] = '\n'; break;
			case 'r': buf[n++] = '\r'; break;
			case 't': buf[n++] = '\t'; break;
			case 'u':
				if (hex4(s, end, &cp) < 0)
					return -1;
				s += 4;
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					unsigned lo;
					if (end - s < 6 || s[0] != '\\' || s[1] != 'u' ||
					    hex4(s + 2, end, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
						return -1;
					s += 6;
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
					return -1;
				}
				if (cp == 0)
					return -1;
				if (cp < 0x80) {
					buf[n++] = (char)cp;
				} else if (cp < 0x800) {
					buf[n++] = (char)(0xC0 | cp >> 6);
					buf[n++] = (char)(0x80 | (cp & 0x3F));
				} else if (cp < 0x10000) {
					buf[n++] = (char)(0xE0 | cp >> 12);
					buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
					buf[n++] = (char)(0x80 | (cp & 0x3F));
				} else {
					buf[n++] = (char)(0xF0 | cp >> 18);
					buf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
					buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
					buf[n++] = (char)(0x80 | (cp & 0x3F));
				}
				break;
			default:
				return -1;
			}
		}
		if (o + n >= len)
			return -1;
		memcpy(out + o, buf, n);
		o += n;
	}
	out[o] = 0;
	return 0;
}

char *json_strdup(const struct json *j, int i, size_t max)
{
	if (!json_is_string(j, i))
		return NULL;
	size_t raw = (size_t)(j->tok[i].end - j->tok[i].start);
	if (raw > max * 6 + 6)
		return NULL;
	/* Decoding never grows: \uXXXX (6 bytes) yields at most 4. */
	char *out = malloc(raw + 1);
	if (!out)
		return NULL;
	if (json_string(j, i, out, raw + 1) < 0 || strlen(out) > max) {
		free(out);
		return NULL;
	}
	return out;
}

int json_u64(const struct json *j, int i, uint64_t *out)
{
	if (i < 0 || i >= j->ntok || j->tok[i].type != JSMN_PRIMITIVE)
		return -1;
	const char *s = j->js + j->tok[i].start;
	int n = j->tok[i].end - j->tok[i].start;
	uint64_t v = 0;
	if (n < 1 || n > 19)
		return -1;
	for (int k = 0; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[k] - '0');
	}
	*out = v;
	return 0;
}

int json_streq(const struct json *j, int i, const char *s)
{
	char buf[256];
	if (!json_is_string(j, i))
		return 0;
	size_t raw = (size_t)(j->tok[i].end - j->tok[i].start);
	if (raw >= sizeof buf) {
		char *d = json_strdup(j, i, raw);
		int eq = d && strcmp(d, s) == 0;
		free(d);
		return eq;
	}
	return json_string(j, i, buf, sizeof buf) == 0 && strcmp(buf, s) == 0;
}

int json_quote(const char *s, char *out, size_t len)
{
	size_t o = 0;
	static const char hex[] = "0123456789abcdef";
#define PUT(c)                          \
	do {                            \
		if (o + 1 >= len)       \
			return -1;      \
		out[o++] = (char)(c);   \
	} while (0)
	PUT('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			PUT('\\');
			PUT(*p);
		} else if (*p < 0x20) {
			PUT('\\'); PUT('u'); PUT('0'); PUT('0');
			PUT(hex[*p >> 4]);
			PUT(hex[*p & 15]);
		} else {
			PUT(*p);
		}
	}
	PUT('"');
#undef PUT
	out[o] = 0;
	return (int)o;
}
