/* FZ-1 and FZ-5 (security-tests.md §11, fuzz targets), the image config's way
 * into a box: an image config blob (lib/oci/manifest.c config_parse), its
 * `.image` sidecar (lib/image/sidecar.c, box-cli.md §10, image cache layout), the
 * environment kern builds from it (lib/base/strv.c env_put over the defaults) and
 * its User resolved in the image's own /etc/passwd and /etc/group
 * (lib/box/users.c). The input is up to three parts split by "\n--KERN-PART--\n":
 * the config JSON, then /etc/passwd, then /etc/group of the image; the whole
 * input is also read as a sidecar, which the cache could hold damaged.
 * Properties: no crash (ASan, UBSan); a sidecar rendered from a config parses
 * back to the same entrypoint, cmd, env, workdir and user, and a sidecar that
 * parses renders and parses back the same; the environment has each name
 * once, with the image's value for names it sets; a user that resolves is the
 * passwd entry an independent lookup finds, with its primary group first and
 * no group twice. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strv.h"
#include "box/envfile.h"
#include "box/users.h"
#include "image/sidecar.h"
#include "lockdown/lockdown.h"
#include "oci/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SEP[] = "\n--KERN-PART--\n";
static const char DIGEST[] = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static int root = -1;

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "image_config property broken: %s (%s)\n", what, detail ? detail : "");
	abort();
}

static int same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* NULL (no array) and [] (an empty one) are different things. */
static int same_vec(char **a, char **b)
{
	if (!a || !b)
		return a == b;
	size_t i = 0;
	for (; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return !a[i] && !b[i];
}

static void check_round_trip(const struct image_meta *m, const char *what)
{
	size_t len;
	struct image_config cfg;
	char *sc = sidecar_render(DIGEST, m, &len);
	if (!sc)
		return;	/* out of memory */
	if (sidecar_parse(sc, len, &cfg) < 0)
		fail("a rendered sidecar does not parse", what);
	if (!same_vec(cfg.entrypoint, m->entrypoint) || !same_vec(cfg.cmd, m->cmd) ||
	    !same_str(cfg.workdir, m->workdir) || !same_str(cfg.user, m->user) || strcmp(cfg.digest, DIGEST))
		fail("a rendered sidecar parses to another config", what);
	/* The sidecar always has an env list; the config may have none. */
	char *none[] = {NULL};
	if (!same_vec(cfg.env, m->env ? m->env : none))
		fail("a rendered sidecar parses to another environment", what);
	image_config_free(&cfg);
	free(sc);
}

/* kern box's order (applets/commands/box_resolve.c build_env): defaults, then the image. */
static void check_env(char **image_env)
{
	struct strv env = {0};
	if (env_defaults(&env, "fuzz") < 0)
		abort();
	for (char **p = image_env; p && *p; p++)
		if (env_put(&env, *p) < 0)
			abort();
	for (size_t i = 0; i < env.n; i++) {
		size_t ki = strcspn(env.v[i], "=");
		for (size_t k = i + 1; k < env.n; k++)
			if (strcspn(env.v[k], "=") == ki && !strncmp(env.v[i], env.v[k], ki) &&
			    env.v[i][ki] == '=' && env.v[k][ki] == '=')
				fail("a name is twice in the environment", env.v[i]);
	}
	/* The last image entry of each name wins. */
	for (char **p = image_env; p && *p; p++) {
		size_t kp = strcspn(*p, "=");
		if ((*p)[kp] != '=')
			continue;
		const char *last = *p;
		for (char **q = p + 1; *q; q++)
			if (strcspn(*q, "=") == kp && !strncmp(*q, *p, kp) && (*q)[kp] == '=')
				last = *q;
		int found = 0;
		for (size_t i = 0; i < env.n; i++)
			found |= strcmp(env.v[i], last) == 0;
		if (!found)
			fail("the image's value of a name is lost", last);
	}
	strv_free(&env);
}

static void put_file(const char *rel, const uint8_t *p, size_t n)
{
	int fd = openat(root, rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n))
		abort();
	close(fd);
}

/* Reference lookup: field f of each line (from a copy, NUL-terminated). */
static int ref_field(const char *line, int f, char *out, size_t len)
{
	for (int i = 0; i < f; i++) {
		line = strchr(line, ':');
		if (!line)
			return -1;
		line++;
	}
	size_t n = 0;
	while (line[n] && line[n] != ':' && line[n] != '\n')
		n++;
	if (n >= len)
		return -1;
	memcpy(out, line, n);
	out[n] = 0;
	return 0;
}

static void check_user(const char *spec, const char *passwd)
{
	static struct lockdown ld;
	char why[512];
	memset(&ld, 0, sizeof ld);
	if (user_resolve(root, spec, &ld, why, sizeof why) < 0)
		return;
	if (ld.ngroups < 1 || ld.ngroups > LOCKDOWN_MAX_GROUPS || ld.groups[0] != ld.gid)
		fail("the primary group is not first", spec);
	for (int i = 1; i < ld.ngroups; i++)
		for (int k = 0; k < i; k++)
			if (ld.groups[i] == ld.groups[k])
				fail("a group is listed twice", spec);
	/* A user name resolved: some passwd line has that name and uid. */
	char name[256];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
	if (strspn(name, "0123456789") == strlen(name))
		return;
	int found = 0;
	for (const char *l = passwd; l && *l && !found; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char f0[256], f2[256];
		if (ref_field(l, 0, f0, sizeof f0) == 0 && strcmp(f0, name) == 0 &&
		    ref_field(l, 2, f2, sizeof f2) == 0 && strtoul(f2, NULL, 10) == ld.uid)
			found = 1;
	}
	if (!found)
		fail("a user name resolved to a uid its passwd line does not have", spec);
}

static char root_path[64];

static void cleanup(void)
{
	unlinkat(root, "etc/passwd", 0);
	unlinkat(root, "etc/group", 0);
	unlinkat(root, "etc", AT_REMOVEDIR);
	rmdir(root_path);
}

static void setup(void)
{
	snprintf(root_path, sizeof root_path, "/tmp/kern-fuzz-image-XXXXXX");
	if (!mkdtemp(root_path))
		abort();
	root = open(root_path, O_RDONLY | O_DIRECTORY);
	if (root < 0 || mkdirat(root, "etc", 0755) < 0)
		abort();
	atexit(cleanup);
}

/* The sidecar as the cache holds it, damaged or not. */
static void fuzz_sidecar(const uint8_t *data, size_t size)
{
	struct image_config cfg;
	if (sidecar_parse((const char *)data, size, &cfg) < 0)
		return;
	struct image_meta m = {.entrypoint = cfg.entrypoint, .cmd = cfg.cmd, .env = cfg.env,
			       .workdir = cfg.workdir, .user = cfg.user};
	check_round_trip(&m, "a sidecar");
	check_env(cfg.env);
	image_config_free(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *part[3] = {data, NULL, NULL};
	size_t len[3] = {size, 0, 0};
	struct image_meta meta;
	char why[512];
	if (root < 0)
		setup();
	fuzz_sidecar(data, size);

	for (int i = 0; i < 2; i++) {
		const uint8_t *sep = memmem(part[i], len[i], SEP, sizeof SEP - 1);
		if (!sep)
			break;
		part[i + 1] = sep + sizeof SEP - 1;
		len[i + 1] = len[i] - (size_t)(part[i + 1] - part[i]);
		len[i] = (size_t)(sep - part[i]);
	}
	/* The config parser reads exactly len bytes: a copy without slack. */
	char *body = malloc(len[0] ? len[0] : 1);
	if (!body)
		return 0;
	memcpy(body, part[0], len[0]);
	int ok = config_parse(body, len[0], &meta, why, sizeof why) == 0;
	free(body);
	if (!ok)
		return 0;
	check_round_trip(&meta, "a config");
	check_env(meta.env);

	put_file("etc/passwd", part[1], len[1]);
	put_file("etc/group", part[2], len[2]);
	if (meta.user && *meta.user) {
		char *pw = calloc(1, len[1] + 1);
		if (pw) {
			if (len[1])	/* part[1] is NULL when the input has one part */
				memcpy(pw, part[1], len[1]);
			check_user(meta.user, pw);
			free(pw);
		}
	}
	image_meta_free(&meta);
	return 0;
}
