#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/strv.h"
#include "image/sidecar.h"

struct out {
	char *p;
	size_t len, cap;
	int oom;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *p = realloc(o->p, cap);
		if (!p) {
			o->oom = 1;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = 0;
}

static void put_escaped(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(o, "\\\\", 2);
		else if (*s == '\t')
			put(o, "\\t", 2);
		else if (*s == '\n')
			put(o, "\\n", 2);
		else
			put(o, s, 1);
	}
}

static void line(struct out *o, const char *key, const char *value)
{
	put(o, key, strlen(key));
	put(o, "\t", 1);
	put_escaped(o, value);
	put(o, "\n", 1);
}

static void json_array_line(struct out *o, const char *key, char **v)
{
	struct out a = {0};
	if (v) {
		put(&a, "[", 1);
		for (size_t i = 0; v[i]; i++) {
			size_t cap = strlen(v[i]) * 6 + 3;
			char *q = malloc(cap);
			if (!q || json_quote(v[i], q, cap) < 0) {
				free(q);
				a.oom = 1;
				break;
			}
			if (i)
				put(&a, ",", 1);
			put(&a, q, strlen(q));
			free(q);
		}
		put(&a, "]", 1);
	}
	if (a.oom)
		o->oom = 1;
	line(o, key, a.p ? a.p : "");
	free(a.p);
}

char *sidecar_render(const char *digest, const struct image_meta *m, size_t *len)
{
	struct out o = {0};
	line(&o, "fmt", "3");
	line(&o, "digest", digest);
	json_array_line(&o, "entrypoint", m->entrypoint);
	json_array_line(&o, "cmd", m->cmd);
	for (size_t i = 0; m->env && m->env[i]; i++)
		line(&o, "env", m->env[i]);
	line(&o, "workdir", m->workdir ? m->workdir : "");
	line(&o, "user", m->user ? m->user : "");
	for (size_t i = 0; m->expose && m->expose[i]; i++)
		line(&o, "expose", m->expose[i]);
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	*len = o.len;
	return o.p;
}

static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1);
	size_t o = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (++i == n)
			goto bad;
		if (s[i] == '\\')
			out[o++] = '\\';
		else if (s[i] == 't')
			out[o++] = '\t';
		else if (s[i] == 'n')
			out[o++] = '\n';
		else
			goto bad;
	}
	out[o] = 0;
	return out;
bad:
	free(out);
	return NULL;
}

static int parse_array(const char *v, char ***out)
{
	struct json j;
	const char *why;
	*out = NULL;
	if (!*v)
		return 0;
	if (json_parse(&j, v, strlen(v), 1 << 22, 4, &why) < 0)
		return -1;
	int rc = -1;
	if (!json_is_array(&j, 0))
		goto out;
	char **vec = calloc((size_t)j.tok[0].size + 1, sizeof(char *));
	if (!vec)
		goto out;
	for (int i = 0; i < j.tok[0].size; i++)
		if (!(vec[i] = json_strdup(&j, json_elem(&j, 0, i), 1 << 20))) {
			for (int k = 0; k < i; k++)
				free(vec[k]);
			free(vec);
			goto out;
		}
	*out = vec;
	rc = 0;
out:
	json_free(&j);
	return rc;
}

static int push(char ***vec, size_t *n, char *s)
{
	char **v = realloc(*vec, (*n + 2) * sizeof(char *));
	if (!v)
		return -1;
	v[(*n)++] = s;
	v[*n] = NULL;
	*vec = v;
	return 0;
}

int sidecar_parse(const char *buf, size_t len, struct image_config *cfg)
{
	size_t nenv = 0;
	int first = 1, rc = -1;
	memset(cfg, 0, sizeof *cfg);
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;
		const char *tab = memchr(buf + pos, '\t', end - pos);
		if (!tab)
			goto out;
		size_t klen = (size_t)(tab - (buf + pos));
		char key[16];
		if (klen >= sizeof key)
			goto next;
		memcpy(key, buf + pos, klen);
		key[klen] = 0;
		char *v = unescape(tab + 1, end - (size_t)(tab + 1 - buf));
		if (!v)
			goto out;
		if (first) {
			first = 0;
			if (strcmp(key, "fmt") != 0 || strcmp(v, "3") != 0) {
				free(v);
				goto out;
			}
			free(v);
		} else if (strcmp(key, "digest") == 0) {
			snprintf(cfg->digest, sizeof cfg->digest, "%s", v);
			free(v);
		} else if (strcmp(key, "entrypoint") == 0 || strcmp(key, "cmd") == 0) {
			char ***dst = key[0] == 'e' ? &cfg->entrypoint : &cfg->cmd;
			int bad = *dst || parse_array(v, dst) < 0;
			free(v);
			if (bad)
				goto out;
		} else if (strcmp(key, "env") == 0) {
			/* A damaged cache entry may hold a bare NAME: dropped as
			 * config_parse drops it. */
			if (!env_is_assignment(v)) {
				free(v);
			} else if (push(&cfg->env, &nenv, v) < 0) {
				free(v);
				goto out;
			}
		} else if (strcmp(key, "workdir") == 0 && !cfg->workdir) {
			cfg->workdir = v;
		} else if (strcmp(key, "user") == 0 && !cfg->user) {
			cfg->user = v;
		} else {
			free(v);
		}
next:
		pos = end + 1;
	}
	if (first)
		goto out;
	if (!cfg->env)
		cfg->env = calloc(1, sizeof(char *));
	if (!cfg->workdir)
		cfg->workdir = strdup("");
	if (!cfg->user)
		cfg->user = strdup("");
	if (cfg->env && cfg->workdir && cfg->user)
		rc = 0;
out:
	if (rc < 0)
		image_config_free(cfg);
	return rc;
}

static void free_vec(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void image_config_free(struct image_config *cfg)
{
	free_vec(cfg->entrypoint);
	free_vec(cfg->cmd);
	free_vec(cfg->env);
	free(cfg->workdir);
	free(cfg->user);
	memset(cfg, 0, sizeof *cfg);
}
