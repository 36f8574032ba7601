/* A growable NULL-terminated vector of strings (argv, env). */
#ifndef KERN_STRV_H
#define KERN_STRV_H

#include <stddef.h>

struct strv {
	char **v;
	size_t n, cap;
};

int strv_push(struct strv *s, const char *str);	/* copies str; -1 on ENOMEM */
/* Appends str, which was malloc'ed and now belongs to s (freed at once on
 * ENOMEM, -1); a NULL str (a failed allocation) is -1 too. */
int strv_take(struct strv *s, char *str);
void strv_free(struct strv *s);
/* For KEY=VALUE lists: replace the entry with the same key, else append. */
int env_put(struct strv *env, const char *kv);
/* NAME=VALUE with a non-empty NAME. */
int env_is_assignment(const char *kv);
/* Drops (and frees) the entries of a NULL-terminated KEY=VALUE vector that
 * are not assignments: no '=' or an empty name. Returns how many went. */
size_t env_drop_bare(char **vec);

#endif
