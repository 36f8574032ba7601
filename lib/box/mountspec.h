/* The bind grammars of box-cli.md §2.1: `-v SRC:DST[:ro|:rw]` and
 * `--mount type=bind,src=S,dst=D[,ro]` (CSV; a field may be wrapped in
 * "..." to hold , or :, with "" for one "). kern-fs takes --mount too. */
#ifndef KERN_MOUNTSPEC_H
#define KERN_MOUNTSPEC_H

#include <stddef.h>

#include "box/box.h"

/* Fill b (strings malloc'd). -1 with *why on bad syntax. Path rules
 * (absolute, clean, refused targets) are checked by bind_check(). */
int parse_volume(const char *spec, struct bind_spec *b, const char **why);
int parse_mount(const char *spec, struct bind_spec *b, const char **why);
/* Box-cli.md §8 checks that need no filesystem: target clean, absolute,
 * not /, /proc, /sys, /dev (after collapsing //); source absolute with no
 * NUL or newline. Collapses b->dst in place. */
int bind_check(struct bind_spec *b, const char **why);
/* --tmpfs PATH[:SIZE]. */
int parse_tmpfs(const char *spec, struct tmpfs_spec *t, const char **why);

/* Render b in --mount syntax, quoting fields as needed (for --plan). */
int format_mount(const struct bind_spec *b, char *out, size_t len);

#endif
