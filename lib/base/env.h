/* Reading kern's own environment variables (box-cli.md §3): a KERN_*
 * variable set to the empty string counts as unset. */
#ifndef KERN_ENV_H
#define KERN_ENV_H

/* The value, or NULL when unset or empty. */
const char *env_get(const char *name);
/* A descriptor named by a variable such as KERN_STARTED_FD: a decimal
 * integer > 2 naming an open descriptor; anything else gives -1. */
int env_fd(const char *name);

#endif
