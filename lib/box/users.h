/* --user / -u (box-cli.md §2.1): resolved in the box's own /etc/passwd and
 * /etc/group, opened no-follow beneath the box root, never the host's. */
#ifndef KERN_USERS_H
#define KERN_USERS_H

#include <stddef.h>

#include "lockdown/lockdown.h"

/* Resolve spec (uid, name, uid:gid, name:group, ...) beneath rootfd into
 * ld->uid/gid/groups/user_set. rootfd < 0 means the built-in host image,
 * whose /etc holds only root and nobody. Returns 0, or -1 with why. */
int user_resolve(int rootfd, const char *spec, struct lockdown *ld, char *why, size_t len);

/* "uid:gid[:g1,g2,...]" for the applet chain and the registry, and back. */
void user_format(const struct lockdown *ld, char *out, size_t len);
int user_parse_numeric(const char *s, struct lockdown *ld);

#endif
