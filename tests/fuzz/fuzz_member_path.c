/* FZ-2: the tar member path guard. Whenever member_path_clean accepts a
 * path, an independent normaliser (a component stack, written separately
 * from the guard) must agree that it stays inside the root and must
 * produce the same cleaned path; whiteout targets derived from it must
 * stay in the same directory and pass the guard themselves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer/member_path.h"

/* Resolve p (len bytes) against a root the way the kernel would, with no
 * symlinks: returns 0 and the canonical path when it never climbs above
 * the root; -1 when it does; -2 when it is absolute or holds a NUL. */
static int reference(const uint8_t *p, size_t len, char *out, size_t outlen, int *saw_dotdot)
{
	const uint8_t *comp[MEMBER_PATH_MAX + 1];
	size_t clen[MEMBER_PATH_MAX + 1], depth = 0, i = 0;
	*saw_dotdot = 0;
	if (len == 0)
		return -2;
	if (p[0] == '/')
		return -2;
	for (size_t k = 0; k < len; k++)
		if (p[k] == 0)
			return -2;
	while (i < len) {
		size_t start = i;
		while (i < len && p[i] != '/')
			i++;
		size_t n = i - start;
		i++;
		if (n == 0 || (n == 1 && p[start] == '.'))
			continue;
		if (n == 2 && p[start] == '.' && p[start + 1] == '.') {
			*saw_dotdot = 1;
			if (depth == 0)
				return -1;
			depth--;
			continue;
		}
		comp[depth] = p + start;
		clen[depth] = n;
		depth++;
	}
	size_t o = 0;
	for (size_t d = 0; d < depth; d++) {
		if (o + clen[d] + 2 > outlen)
			return -3;
		if (d)
			out[o++] = '/';
		memcpy(out + o, comp[d], clen[d]);
		o += clen[d];
	}
	out[o] = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char got[MEMBER_PATH_MAX + 1], want[2 * MEMBER_PATH_MAX + 2],
		target[MEMBER_PATH_MAX + 1], again[MEMBER_PATH_MAX + 1];
	const char *why;
	int dotdot;

	if (size > 3 * MEMBER_PATH_MAX)
		return 0;
	if (member_path_clean((const char *)data, size, got, sizeof got, &why) != 0)
		return 0;
	int ref = reference(data, size, want, sizeof want, &dotdot);
	if (ref != 0 || dotdot) {
		fprintf(stderr, "guard accepted a path the reference says escapes (%d)\n", ref);
		abort();
	}
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "guard and reference disagree: '%s' vs '%s'\n", got, want);
		abort();
	}
	if (strlen(got) > MEMBER_PATH_MAX || strstr(got, "//") || got[0] == '/' ||
	    (*got && got[strlen(got) - 1] == '/') || member_name_reserved(got, strcspn(got, "/")))
		abort();
	/* A whiteout's target is a sibling and itself a clean path. */
	enum member_kind kind;
	if (member_classify(got, target, sizeof target, &kind, &why) == 0 &&
	    (kind == MEMBER_WHITEOUT || kind == MEMBER_OPAQUE)) {
		const char *slash = strrchr(got, '/');
		size_t dl = slash ? (size_t)(slash - got) : 0;
		if (strncmp(target, got, dl) != 0)
			abort();
		if (kind == MEMBER_WHITEOUT) {
			if (member_path_clean(target, strlen(target), again, sizeof again, &why) != 0 ||
			    strcmp(again, target) != 0 || strchr(target + dl + (dl ? 1 : 0), '/'))
				abort();
		} else if (strlen(target) != dl) {
			abort();
		}
	}
	return 0;
}
