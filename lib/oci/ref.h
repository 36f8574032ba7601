/* Image references (box-cli.md §9): validation, the split into registry,
 * repository and tag-or-digest, the canonical form, and the string-only
 * loopback rule that decides http against https. */
#ifndef KERN_IMAGEREF_H
#define KERN_IMAGEREF_H

#include <stddef.h>

#define REF_MAX 255

struct image_ref {
	char registry[REF_MAX + 1];	/* API host[:port]: registry-1.docker.io, localhost:5000 */
	char repo[REF_MAX + 1];		/* library/python, team/app */
	char reference[REF_MAX + 1];	/* tag, or sha256:<hex> when is_digest */
	int is_digest;
	int loopback;			/* plain http allowed (decided on the string) */
};

/* Parse and validate ref (box-cli.md §9.2 validation, then §9.1 canonical
 * form). Returns 0, or -1 with *why
 * for `error: image: bad image reference '<ref>': <why>`. */
int image_ref_parse(const char *ref, struct image_ref *r, const char **why);

/* Canonical form: "docker.io/library/python:3.12-slim",
 * "localhost:5000/x@sha256:...". Written into out (REF_MAX*3 is enough). */
void image_ref_canonical(const struct image_ref *r, char *out, size_t len);

/* "https://host[:port]" or "http://host[:port]" for a registry host. */
void image_ref_base(const struct image_ref *r, char *out, size_t len);

/* 1 if host[:port] names loopback on the string alone: localhost,
 * 127.x.y.z, [::1]; never resolved. */
int host_is_loopback(const char *hostport);

/* The host of an absolute http(s) URL, with userinfo and port removed,
 * lowercased, into out. -1 if the URL is not http(s) or malformed.
 * scheme_https receives 1 for https. */
int url_host(const char *url, char *out, size_t len, int *scheme_https);

/* The host arch as an OCI architecture ("amd64", "arm64"). */
const char *host_arch(void);

#endif
