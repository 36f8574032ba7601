/* See dirmap.h: open addressing, FNV-1a, tombstones on removal. */
#include <stdlib.h>
#include <string.h>

#include "layer/dirmap.h"

struct slot {
	char *key;		/* NULL = empty */
	uint64_t hash;
	int dead;
	struct dir_info info;
};

struct dirmap {
	struct slot *s;
	size_t cap, used, live;	/* used counts tombstones too */
};

static uint64_t fnv(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

struct dirmap *dirmap_new(void)
{
	struct dirmap *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->cap = 256;
	m->s = calloc(m->cap, sizeof *m->s);
	if (!m->s) {
		free(m);
		return NULL;
	}
	return m;
}

void dirmap_free(struct dirmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->s[i].key);
	free(m->s);
	free(m);
}

static struct slot *find(const struct dirmap *m, const char *key, uint64_t h)
{
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct slot *s = &m->s[i];
		if (!s->key)
			return NULL;
		if (!s->dead && s->hash == h && strcmp(s->key, key) == 0)
			return s;
	}
}

struct dir_info *dirmap_get(const struct dirmap *m, const char *path)
{
	struct slot *s = find(m, path, fnv(path));
	return s ? &s->info : NULL;
}

static int grow(struct dirmap *m)
{
	size_t cap = m->live * 4 > m->cap ? m->cap * 2 : m->cap;
	struct slot *n = calloc(cap, sizeof *n);
	if (!n)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		struct slot *s = &m->s[i];
		if (!s->key)
			continue;
		if (s->dead) {
			free(s->key);
			continue;
		}
		size_t j = s->hash & (cap - 1);
		while (n[j].key)
			j = (j + 1) & (cap - 1);
		n[j] = *s;
	}
	free(m->s);
	m->s = n;
	m->cap = cap;
	m->used = m->live;
	return 0;
}

struct dir_info *dirmap_put(struct dirmap *m, const char *path)
{
	uint64_t h = fnv(path);
	struct slot *s = find(m, path, h);
	if (s)
		return &s->info;
	if ((m->used + 1) * 2 > m->cap && grow(m) < 0)
		return NULL;
	size_t i = h & (m->cap - 1);
	while (m->s[i].key)
		i = (i + 1) & (m->cap - 1);
	s = &m->s[i];
	s->key = strdup(path);
	if (!s->key)
		return NULL;
	s->hash = h;
	s->dead = 0;
	memset(&s->info, 0, sizeof s->info);
	m->used++;
	m->live++;
	return &s->info;
}

void dirmap_remove_under(struct dirmap *m, const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < m->cap; i++) {
		struct slot *s = &m->s[i];
		if (!s->key || s->dead)
			continue;
		if (strncmp(s->key, path, n) == 0 && (s->key[n] == 0 || s->key[n] == '/' || n == 0)) {
			s->dead = 1;
			m->live--;
		}
	}
}

const char *dirmap_next(const struct dirmap *m, size_t *it, struct dir_info **info)
{
	for (; *it < m->cap; (*it)++) {
		struct slot *s = &m->s[*it];
		if (s->key && !s->dead) {
			(*it)++;
			*info = &s->info;
			return s->key;
		}
	}
	return NULL;
}

size_t dirmap_count(const struct dirmap *m)
{
	return m->live;
}
