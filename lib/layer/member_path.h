/* The member path guard of isolation.md §12.1 step 4, and the whiteout
 * naming rules of step 6: pure string checks, no filesystem access. */
#ifndef KERN_MEMBER_PATH_H
#define KERN_MEMBER_PATH_H

#include <stddef.h>

#define MEMBER_PATH_MAX 4096	/* longer member paths are refused */
#define MEMBER_NAME_MAX 255	/* one component, the kernel's NAME_MAX */

/* Clean a member path of len bytes into out (at least MEMBER_PATH_MAX + 1
 * bytes): components joined by single slashes, `.` and empty components
 * dropped; "" is the root itself. Refused (-1 with *why): empty, NUL
 * inside, longer than MEMBER_PATH_MAX, absolute, a `..` component, a
 * component over MEMBER_NAME_MAX, a top-level name starting `.kern-`. */
int member_path_clean(const char *in, size_t len, char *out, size_t outlen, const char **why);

enum member_kind {
	MEMBER_PLAIN,		/* an ordinary member */
	MEMBER_OPAQUE,		/* <dir>/.wh..wh..opq: target = <dir> ("" = the root) */
	MEMBER_WHITEOUT,	/* <dir>/.wh.<name>: target = <dir>/<name> */
	MEMBER_IGNORED,		/* other .wh..wh. names and anything under them */
};

/* Classify a cleaned path. For OPAQUE and WHITEOUT the target is written
 * to target (same size as the path). -1 with *why for a bad whiteout:
 * empty name, `.` or `..`, a `.wh.` directory with members under it, a
 * top-level target starting `.kern-`. */
int member_classify(const char *clean, char *target, size_t tlen, enum member_kind *kind,
		    const char **why);

/* 1 if a top-level name is reserved for kern's own temporary files. */
int member_name_reserved(const char *name, size_t len);

#endif
