/* image_resolve: the cache policy of isolation.md §12.2-§12.3 around
 * image_pull. A complete entry is used without locking; anything else is
 * rebuilt under the per-image lock, `.ok` written last. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/rmtree.h"
#include "base/testhook.h"
#include "image/cache.h"
#include "image/image.h"
#include "image/sidecar.h"
#include "image/store.h"
#include "oci/pull.h"
#include "oci/ref.h"


int image_ref_check(const char *ref, const char **why)
{
	struct image_ref r;
	return image_ref_parse(ref, &r, why);
}

static int load_sidecar(const struct cache *c, const char *ref, struct image_config *cfg)
{
	char name[400];
	size_t len;
	cache_name(c, ".image", name, sizeof name);
	char *buf = cache_read_file(c, name, 16 << 20, &len);
	if (!buf || sidecar_parse(buf, len, cfg) < 0) {
		fatal("image", "%s: the cached config %s/%s is unreadable or malformed", ref, c->root, name);
		free(buf);
		return -1;
	}
	free(buf);
	return 0;
}

static int canonical_line(const struct image_ref *r, char *out, size_t len)
{
	image_ref_canonical(r, out, len - 1);
	strcat(out, "\n");
	return (int)strlen(out);
}

struct pull_ctx {
	const char *ref;
	const struct image_ref *r;
	const char *arch;
};

static int fetch_registry(void *ctx, int rootfs_fd, char **sidecar, size_t *slen)
{
	struct pull_ctx *p = ctx;
	return image_pull(p->ref, p->r, p->arch, rootfs_fd, sidecar, slen);
}

/* Fetch into dir (created fresh in the cache root). */
static int pull_into(const struct cache *c, const char *dir, image_fetch_fn fetch, void *ctx,
		     char **sidecar, size_t *slen)
{
	if (mkdirat(c->root_fd, dir, 0755) < 0) {
		fatal_errno("image", "mkdir %s/%s", c->root, dir);
		return 1;
	}
	int fd = openat(c->root_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fatal_errno("image", "open %s/%s", c->root, dir);
		rmtree_at(c->root_fd, dir);
		return 1;
	}
	test_phase("pull-fetch");
	int rc = fetch(ctx, fd, sidecar, slen);
	close(fd);
	if (rc != 0)
		rmtree_at(c->root_fd, dir);
	return rc;
}

static int write_sidecars(const struct cache *c, const struct image_ref *r, const char *sidecar,
			  size_t slen)
{
	char name[400], line[REF_MAX * 2];
	cache_name(c, ".image", name, sizeof name);
	test_phase("pull-sidecar");
	if (cache_write_file(c, name, sidecar, slen) < 0) {
		fatal_errno("image", "write %s/%s", c->root, name);
		return 1;
	}
	test_phase("pull-ok");
	cache_name(c, ".ok", name, sizeof name);
	int n = canonical_line(r, line, sizeof line);
	if (cache_write_file(c, name, line, (size_t)n) < 0) {
		fatal_errno("image", "write %s/%s", c->root, name);
		return 1;
	}
	return 0;
}

static int unlink_sidecars(const struct cache *c)
{
	char name[400];
	cache_name(c, ".ok", name, sizeof name);
	if (unlinkat(c->root_fd, name, 0) < 0 && errno != ENOENT)
		return -1;
	cache_name(c, ".image", name, sizeof name);
	if (unlinkat(c->root_fd, name, 0) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

static int pull_missing(const struct cache *c, const char *ref, const struct image_ref *r,
			const char *arch)
{
	const char *what = "";
	char *sidecar = NULL;
	size_t slen;
	int lock = cache_lock(c);
	if (lock < 0)
		return 1;
	int rc = 1;
	enum entry_state st = cache_state(c, &what);
	switch (st) {
	case ENTRY_COMPLETE:
		rc = 0;	/* another pull finished it while we waited */
		goto out;
	case ENTRY_UNSAFE:
		fatal("image", "%s/%s%s is a symlink or not owned by you - refusing", c->root, c->key, what);
		goto out;
	case ENTRY_ABSENT:
		note("image '%s' is not cached; pulling it once", ref);
		break;
	case ENTRY_NO_ROOTFS:
		note("image '%s' is cached without a usable rootfs; fetching it again", ref);
		break;
	case ENTRY_NO_CONFIG:
		note("image '%s' is cached without its config; fetching it again", ref);
		break;
	}
	/* Sidecars go first: from here on the entry reads as incomplete. */
	if (unlink_sidecars(c) < 0 || rmtree_at(c->root_fd, c->key) < 0) {
		fatal_errno("image", "cannot clear %s/%s", c->root, c->key);
		goto out;
	}
	struct pull_ctx pc = {ref, r, arch};
	if (pull_into(c, c->key, fetch_registry, &pc, &sidecar, &slen) != 0)
		goto out;
	rc = write_sidecars(c, r, sidecar, slen);
	if (rc != 0) {
		unlink_sidecars(c);
		rmtree_at(c->root_fd, c->key);
	}
out:
	free(sidecar);
	close(lock);
	return rc;
}

/* --pull always: build beside, then swap, so running boxes keep the lower
 * they mounted; the old copy is retired as <key>.old-<pid>. */
static int replace_entry(const struct cache *c, const struct image_ref *r, image_fetch_fn fetch,
			 void *ctx, const char *why)
{
	const char *what = "";
	char *sidecar = NULL, fresh[400], old[400];
	size_t slen;
	int lock = cache_lock(c);
	if (lock < 0)
		return 1;
	int rc = 1;
	if (cache_state(c, &what) == ENTRY_UNSAFE) {
		fatal("image", "%s/%s%s is a symlink or not owned by you - refusing", c->root, c->key, what);
		goto out;
	}
	if (why)
		note("%s", why);
	snprintf(fresh, sizeof fresh, "%s.pull-%d", c->key, (int)getpid());
	snprintf(old, sizeof old, "%s.old-%d", c->key, (int)getpid());
	rmtree_at(c->root_fd, fresh);
	if (pull_into(c, fresh, fetch, ctx, &sidecar, &slen) != 0)
		goto out;
	if (unlink_sidecars(c) < 0) {
		fatal_errno("image", "cannot clear the sidecars of %s/%s", c->root, c->key);
		rmtree_at(c->root_fd, fresh);
		goto out;
	}
	if (renameat2(c->root_fd, fresh, c->root_fd, c->key, RENAME_EXCHANGE) == 0) {
		if (renameat(c->root_fd, fresh, c->root_fd, old) < 0)
			rmtree_at(c->root_fd, fresh);
	} else if (errno == ENOENT) {
		if (renameat(c->root_fd, fresh, c->root_fd, c->key) < 0) {
			fatal_errno("image", "rename %s/%s", c->root, fresh);
			rmtree_at(c->root_fd, fresh);
			goto out;
		}
	} else {
		/* No RENAME_EXCHANGE here: two renames, the old copy first. */
		if (renameat(c->root_fd, c->key, c->root_fd, old) < 0 ||
		    renameat(c->root_fd, fresh, c->root_fd, c->key) < 0) {
			fatal_errno("image", "rename %s/%s", c->root, fresh);
			rmtree_at(c->root_fd, fresh);
			goto out;
		}
	}
	rc = write_sidecars(c, r, sidecar, slen);
out:
	free(sidecar);
	close(lock);
	return rc;
}

int image_resolve(const char *ref, int policy, const char *arch, char *rootfs, size_t len,
		  struct image_config *cfg)
{
	struct image_ref r;
	struct cache c;
	const char *why, *what = "";

	memset(cfg, 0, sizeof *cfg);
	if (image_ref_parse(ref, &r, &why) < 0) {
		fatal("image", "bad image reference '%s': %s", ref, why);
		return -1;
	}
	/* --pull never decides before anything is created. */
	if (cache_open(&c, ref, policy != PULL_NEVER && policy != PULL_PLAN) < 0)
		return -1;
	enum entry_state st = cache_state(&c, &what);
	int rc = 0;
	if (st == ENTRY_UNSAFE) {
		fatal("image", "%s/%s%s is a symlink or not owned by you - refusing", c.root, c.key, what);
		rc = EXIT_CLI;
	} else if (policy == PULL_PLAN && st != ENTRY_COMPLETE) {
		fatal("image", "image '%s' is not in the cache and --plan never pulls", ref);
		hint("run `kern pull %s` first", ref);
		rc = EXIT_CLI;
	} else if (policy == PULL_NEVER && st != ENTRY_COMPLETE) {
		fatal("image", "image '%s' is not usable locally (it needs its rootfs, its sentinel and its config sidecar) and --pull never was given",
		      ref);
		rc = EXIT_CLI;
	} else if (policy == PULL_ALWAYS) {
		struct pull_ctx pc = {ref, &r, arch};
		char why_note[600];
		snprintf(why_note, sizeof why_note, "pulling image '%s' (--pull always)", ref);
		rc = replace_entry(&c, &r, fetch_registry, &pc, why_note);
	} else if (st != ENTRY_COMPLETE) {
		rc = pull_missing(&c, ref, &r, arch);
	}
	if (rc == 0 && load_sidecar(&c, ref, cfg) < 0)
		rc = EXIT_CLI;
	if (rc == 0 && (size_t)snprintf(rootfs, len, "%s/%s", c.root, c.key) >= len) {
		fatal("image", "%s: cache path too long", ref);
		rc = EXIT_CLI;
	}
	if (rc != 0)
		image_config_free(cfg);
	cache_close(&c);
	return rc ? -1 : 0;
}

int image_import(const char *ref, image_fetch_fn fetch, void *ctx)
{
	struct image_ref r;
	struct cache c;
	const char *why;
	if (image_ref_parse(ref, &r, &why) < 0) {
		fatal("image", "bad image reference '%s': %s", ref, why);
		return -1;
	}
	if (cache_open(&c, ref, 1) < 0)
		return -1;
	int rc = replace_entry(&c, &r, fetch, ctx, NULL);
	cache_close(&c);
	return rc ? -1 : 0;
}
