/* --env-file (box-cli.md §2.1): one KEY=VALUE per LF-terminated line, the
 * value verbatim after the first '='; empty lines and lines starting '#'
 * skipped. Read once, on the host, before anything is forked. */
#ifndef KERN_ENVFILE_H
#define KERN_ENVFILE_H

#include "base/strv.h"

#define ENVFILE_MAX (4 << 20)

/* Append the entries of path to out. Returns 0, or -1 with a message in
 * why ("line 3 has no '='"). */
int envfile_read(const char *path, struct strv *out, char *why, size_t len);

/* The box's base environment (box-cli.md §2.2) into env. */
int env_defaults(struct strv *env, const char *hostname);

#endif
