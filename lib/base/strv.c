#include <stdlib.h>
#include <string.h>

#include "base/strv.h"

int strv_take(struct strv *s, char *str)
{
	if (!str)
		return -1;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			free(str);
			return -1;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = str;
	s->v[++s->n] = NULL;
	return 0;
}

int strv_push(struct strv *s, const char *str)
{
	return strv_take(s, strdup(str));
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

int env_put(struct strv *env, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], kv, klen) == 0 && env->v[i][klen] == '=') {
			char *d = strdup(kv);
			if (!d)
				return -1;
			free(env->v[i]);
			env->v[i] = d;
			return 0;
		}
	}
	return strv_push(env, kv);
}

int env_is_assignment(const char *kv)
{
	const char *eq = strchr(kv, '=');
	return eq && eq != kv;
}

/* An image's Env is NAME=VALUE by the OCI image spec; a bare NAME would
 * make env_put replace that name's value with an entry that sets nothing. */
size_t env_drop_bare(char **vec)
{
	size_t out = 0, dropped = 0;
	for (size_t i = 0; vec && vec[i]; i++) {
		if (!env_is_assignment(vec[i])) {
			free(vec[i]);
			dropped++;
			continue;
		}
		vec[out++] = vec[i];
	}
	if (vec)
		vec[out] = NULL;
	return dropped;
}
