/* One registry endpoint (the registry itself or a mirror) for one
 * repository: the /v2/ probe and authentication of isolation.md §11.2,
 * then manifests and blobs with the limits of §11.1. */
#ifndef KERN_REGCLIENT_H
#define KERN_REGCLIENT_H

#include <stddef.h>

#include "oci/http.h"

struct regclient {
	char base[512];		/* http(s)://host[:port] of this endpoint */
	char host[256];		/* host[:port], for credentials and messages */
	char repo[256];
	const char *ref;	/* the reference as given, for messages */
	int hub;		/* Docker Hub: auth.docker.io may hold the creds */
	char *authorization;	/* "Bearer ..." / "Basic ...", never printed */
	char err[700];		/* why the last call failed (area registry) */
	int quiet_errors;	/* a mirror: the caller reports, as a note */
};

/* Probe base/v2/ and authenticate. Returns 0, or -1 with g->err. */
int regclient_connect(struct regclient *g, const char *base, const char *host, const char *repo,
		     const char *ref, int hub);

/* GET a manifest by tag or digest (at most 8,000,000 bytes). On HTTP
 * success returns 0 with the body; a registry error response returns 1
 * with the body too (for diagnosis) and *status; -1 with g->err. */
int regclient_manifest(struct regclient *g, const char *reference, char **body, size_t *len,
		      char *content_type, size_t ctlen, long *status);

/* Start GET of a blob; h is ready for http_read. max is the byte limit.
 * Returns 0, or -1 with g->err (including a non-200 status). */
int regclient_blob(struct regclient *g, const char *digest, unsigned long long max, long timeout_s,
		  struct http *h);

void regclient_close(struct regclient *g);

#endif
