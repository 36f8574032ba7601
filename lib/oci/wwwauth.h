/* The WWW-Authenticate challenge of a registry's /v2/ (isolation.md §11.2),
 * parsed without trusting a byte of it. */
#ifndef KERN_WWWAUTH_H
#define KERN_WWWAUTH_H

#include <stddef.h>

enum auth_scheme { AUTH_NONE, AUTH_BEARER, AUTH_BASIC, AUTH_OTHER };

struct www_auth {
	enum auth_scheme scheme;
	char realm[1024];
	char service[256];
};

/* Parse the first challenge of hdr. Returns 0, or -1 when the header is
 * malformed or a parameter is too long (the caller treats it as unknown). */
int www_auth_parse(const char *hdr, struct www_auth *a);

#endif
