/* Registry credentials written by `kern login`: one file, 0600, owned by
 * the caller, under the config dir. Lines are `host<TAB>base64(user:pass)`.
 * Credentials never travel on argv or in the environment and are never
 * printed. */
#ifndef KERN_CREDS_H
#define KERN_CREDS_H

#include <stddef.h>

/* "docker.io" and "index.docker.io" mean "registry-1.docker.io". */
void creds_host(const char *registry, char *out, size_t len);

/* The base64 "user:pass" for host into out. Returns 1 found, 0 none,
 * -1 the file is unusable (a warning was printed). */
int creds_lookup(const char *host, char *out, size_t len);

/* Add or replace host's entry, atomically (temp file, fsync, rename).
 * Returns 0 or -1 with errno; *what names the failing step. */
int creds_store(const char *host, const char *user, const char *pass, const char **what,
		char *path, size_t plen);

#endif
