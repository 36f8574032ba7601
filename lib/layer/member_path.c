/* See member_path.h. */
#include <string.h>

#include "layer/member_path.h"

#define RESERVED ".kern-"
#define WH ".wh."
#define WH_META ".wh..wh."
#define WH_OPAQUE ".wh..wh..opq"

int member_name_reserved(const char *name, size_t len)
{
	return len >= strlen(RESERVED) && memcmp(name, RESERVED, strlen(RESERVED)) == 0;
}

int member_path_clean(const char *in, size_t len, char *out, size_t outlen, const char **why)
{
	size_t o = 0;
	if (!in || len == 0) {
		*why = "member has an empty name";
		return -1;
	}
	if (memchr(in, 0, len)) {
		*why = "member path contains NUL";
		return -1;
	}
	if (len > MEMBER_PATH_MAX) {
		*why = "member path is longer than 4096 bytes";
		return -1;
	}
	if (in[0] == '/') {
		*why = "member path is absolute";
		return -1;
	}
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && in[j] != '/')
			j++;
		size_t n = j - i;
		const char *c = in + i;
		i = j + 1;
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			*why = "member path has a '..' component";
			return -1;
		}
		if (n > MEMBER_NAME_MAX) {
			*why = "member path has a component longer than 255 bytes";
			return -1;
		}
		if (o == 0 && member_name_reserved(c, n)) {
			*why = "top-level names starting '.kern-' are reserved";
			return -1;
		}
		if (o + (o ? 1 : 0) + n + 1 > outlen) {
			*why = "member path is longer than 4096 bytes";
			return -1;
		}
		if (o)
			out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
	}
	out[o] = 0;
	return 0;
}

static int starts(const char *c, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);
	return n >= p && memcmp(c, prefix, p) == 0;
}

int member_classify(const char *clean, char *target, size_t tlen, enum member_kind *kind,
		    const char **why)
{
	const char *last = strrchr(clean, '/');
	const char *base = last ? last + 1 : clean;
	size_t dirlen = last ? (size_t)(last - clean) : 0;
	size_t blen = strlen(base);

	*kind = MEMBER_PLAIN;
	/* A .wh. name used as a directory: its members are never materialised
	 * (AUFS meta directories) or refused (a whiteout name with a '/'). */
	for (const char *c = clean; c < base;) {
		const char *e = strchr(c, '/');
		size_t n = (size_t)(e - c);
		if (starts(c, n, WH_META)) {
			*kind = MEMBER_IGNORED;
			return 0;
		}
		if (starts(c, n, WH)) {
			*why = "whiteout name contains '/'";
			return -1;
		}
		c = e + 1;
	}
	if (!starts(base, blen, WH))
		return 0;
	if (strcmp(base, WH_OPAQUE) == 0) {
		if (dirlen + 1 > tlen) {
			*why = "whiteout path too long";
			return -1;
		}
		memcpy(target, clean, dirlen);
		target[dirlen] = 0;
		*kind = MEMBER_OPAQUE;
		return 0;
	}
	if (starts(base, blen, WH_META)) {
		*kind = MEMBER_IGNORED;
		return 0;
	}
	const char *name = base + strlen(WH);
	size_t nlen = strlen(name);
	if (nlen == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		*why = "whiteout names no file ('.wh.', '.wh..' or '.wh...')";
		return -1;
	}
	if (dirlen == 0 && member_name_reserved(name, nlen)) {
		*why = "whiteout of a reserved top-level '.kern-' name";
		return -1;
	}
	if (dirlen + 1 + nlen + 1 > tlen) {
		*why = "whiteout path too long";
		return -1;
	}
	memcpy(target, clean, dirlen);
	size_t o = dirlen;
	if (dirlen)
		target[o++] = '/';
	memcpy(target + o, name, nlen + 1);
	*kind = MEMBER_WHITEOUT;
	return 0;
}
