/* A growable NULL-terminated vector of strings (argv, env). */
#ifndef KERN_STRV_H
#define KERN_STRV_H

#include <stddef.h>

struct strv {
	char **v;
	size_t n, cap;
};

int strv_push(struct strv *s, const char *str);	/* copies str; -1 on ENOMEM */
void strv_free(struct strv *s);
/* For KEY=VALUE lists: replace the entry with the same key, else append. */
int env_put(struct strv *env, const char *kv);

#endif
