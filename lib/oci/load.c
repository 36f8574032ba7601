#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "base/json.h"
#include "base/path.h"
#include "base/rmtree.h"
#include "base/xdg.h"
#include "image/store.h"
#include "oci/digest.h"
#include "oci/load.h"
#include "oci/manifest.h"
#include "oci/pull.h"
#include "oci/ref.h"

#define MEMBER_MAX 4096
#define INDEX_MAX 8000000

/* Blobs of a layout directory: blobs/sha256/<hex>, or for a docker-save
 * archive the files its manifest.json names (digest -> path table). */
struct layout {
	int dir_fd;
	const char *path;
	int ndocker;
	char (*docker_digest)[DIGEST_LEN + 1];
	char (*docker_path)[MEMBER_MAX];
	char *manifest;		/* the image manifest (verified or synthesised) */
	size_t mlen;
	char mdigest[DIGEST_LEN + 1];
	const char *ref;
};

struct file_stream {
	int fd;
	char err[300];
};

static ssize_t file_read(void *ctx, void *buf, size_t len)
{
	struct file_stream *s = ctx;
	ssize_t n;
	do
		n = read(s->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		snprintf(s->err, sizeof s->err, "read: %s", strerror(errno));
	return n;
}

static const char *file_error(void *ctx)
{
	return ((struct file_stream *)ctx)->err;
}

static void file_close(void *ctx)
{
	struct file_stream *s = ctx;
	close(s->fd);
	free(s);
}

static const char *blob_path(const struct layout *l, const char *digest, char *buf, size_t len)
{
	for (int i = 0; i < l->ndocker; i++)
		if (strcmp(l->docker_digest[i], digest) == 0)
			return l->docker_path[i];
	snprintf(buf, len, "blobs/sha256/%s", digest_hex(digest));
	return buf;
}

static int layout_open(void *src, const char *digest, uint64_t max, long timeout_s,
		       struct blob_stream *bs, char *why, size_t wlen)
{
	struct layout *l = src;
	char buf[128];
	struct stat st;
	(void)timeout_s;
	const char *rel = blob_path(l, digest, buf, sizeof buf);
	int fd = open_beneath(l->dir_fd, rel, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		snprintf(why, wlen, "%s: blob %s (%s): %s", l->path, digest, rel,
			 fd < 0 ? strerror(errno) : "not a regular file within the size limit");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct file_stream *s = calloc(1, sizeof *s);
	if (!s) {
		close(fd);
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	s->fd = fd;
	bs->read = file_read;
	bs->close = file_close;
	bs->error = file_error;
	bs->ctx = s;
	return 0;
}

/* Read a small file beneath the layout (no-follow). */
static char *read_small(int dir_fd, const char *rel, size_t max, size_t *len)
{
	int fd = open_beneath(dir_fd, rel, O_RDONLY | O_CLOEXEC, 0);
	return fd < 0 ? NULL : read_regular_fd(fd, max, (uid_t)-1, EFBIG, len);
}

/* The manifest bytes of digest, verified. */
static char *manifest_blob(struct layout *l, const char *digest, size_t *len)
{
	char rel[128];
	unsigned char sum[32];
	char got[DIGEST_LEN + 1];
	snprintf(rel, sizeof rel, "blobs/sha256/%s", digest_hex(digest));
	char *b = read_small(l->dir_fd, rel, MANIFEST_MAX, len);
	if (!b) {
		fatal_errno("image", "%s: %s", l->path, rel);
		return NULL;
	}
	sha256_sum(b, *len, sum);
	digest_format(sum, got);
	if (strcmp(got, digest) != 0) {
		fatal("manifest", "manifest digest mismatch (expected %s, got %s) - refusing", digest, got);
		free(b);
		return NULL;
	}
	return b;
}

/* name (index.json, manifest.json) read from the layout and parsed into
 * j; NULL, reported, when it is missing, too large or not JSON. */
static char *layout_json(struct layout *l, const char *name, struct json *j)
{
	size_t len;
	const char *why;
	char *text = read_small(l->dir_fd, name, INDEX_MAX, &len);
	if (!text) {
		fatal_errno("image", "%s: %s", l->path, name);
		return NULL;
	}
	if (json_parse(j, text, len, INDEX_MAX, JSON_DEPTH, &why) < 0) {
		fatal("manifest", "%s: %s: %s - refusing", l->path, name, why);
		free(text);
		return NULL;
	}
	return text;
}

/* Pick the manifest from index.json: the one entry, or the one whose
 * ref.name annotation matches the tag; through a nested index by platform. */
static int oci_pick(struct layout *l, const char *tag, const char *arch, char **ref_name)
{
	struct json j;
	char *idx = layout_json(l, "index.json", &j);
	*ref_name = NULL;
	if (!idx)
		return -1;
	int ms = json_get(&j, 0, "manifests"), pick = -1, count = json_is_array(&j, ms) ? j.tok[ms].size : 0;
	const char *want = tag ? strrchr(tag, ':') : NULL;
	for (int i = 0, e; (e = json_elem(&j, ms, i)) >= 0; i++) {
		int ann = json_get(&j, e, "annotations");
		char name[300] = "";
		json_string(&j, json_get(&j, ann, "org.opencontainers.image.ref.name"), name, sizeof name);
		if (count == 1 || (tag && (strcmp(name, tag) == 0 || (want && strcmp(name, want + 1) == 0))))
			pick = e;
	}
	char digest[DIGEST_LEN + 1] = "";
	if (pick >= 0) {
		int ann = json_get(&j, pick, "annotations");
		*ref_name = json_strdup(&j, json_get(&j, ann, "org.opencontainers.image.ref.name"), 255);
		if (json_string(&j, json_get(&j, pick, "digest"), digest, sizeof digest) < 0 ||
		    !digest_valid(digest))
			digest[0] = 0;
	}
	json_free(&j);
	free(idx);
	if (pick < 0) {
		fatal("image", "%s holds %d images; name one with --tag matching its ref.name annotation",
		      l->path, count);
		return -1;
	}
	if (!digest[0]) {
		fatal("manifest", "%s: index.json: the digest is not sha256: plus 64 lowercase hex - refusing",
		      l->path);
		return -1;
	}
	for (int depth = 0; depth < 2; depth++) {
		enum manifest_kind kind;
		char w[600], offered[512], chosen[DIGEST_LEN + 1];
		l->manifest = manifest_blob(l, digest, &l->mlen);
		if (!l->manifest)
			return -1;
		if (manifest_kind(l->manifest, l->mlen, NULL, &kind, w, sizeof w) < 0) {
			fatal("manifest", "%s: %s - refusing", l->path, w);
			return -1;
		}
		if (kind == MK_MANIFEST) {
			strcpy(l->mdigest, digest);
			return 0;
		}
		int sel = index_select(l->manifest, l->mlen, arch, chosen, offered, sizeof offered, w,
				       sizeof w);
		free(l->manifest);
		l->manifest = NULL;
		if (sel != 0) {
			if (sel < 0)
				fatal("manifest", "%s: index: %s - refusing", l->path, w);
			else
				fatal("image", "%s: no linux/%s image in the index (it offers linux: %s)",
				      l->path, arch, offered[0] ? offered : "none");
			return -1;
		}
		strcpy(digest, chosen);
	}
	fatal("manifest", "%s: indexes nested too deeply - refusing", l->path);
	return -1;
}

static int hash_file(int dir_fd, const char *rel, char *digest, uint64_t *size)
{
	int fd = open_beneath(dir_fd, rel, O_RDONLY | O_CLOEXEC, 0);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	struct sha256 h;
	unsigned char sum[32];
	static char buf[1 << 16];
	ssize_t n;
	sha256_begin(&h);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		sha256_feed(&h, buf, (size_t)n);
	sha256_end(&h, sum);
	close(fd);
	digest_format(sum, digest);
	*size = (uint64_t)st.st_size;
	return n < 0 ? -1 : 0;
}

/* docker save: manifest.json names the config and layer files; a manifest
 * naming them by their sha256 is synthesised so the usual checks run. */
static int docker_pick(struct layout *l, char **ref_name)
{
	struct json j;
	char *mj = layout_json(l, "manifest.json", &j);
	*ref_name = NULL;
	if (!mj)
		return -1;
	if (!json_is_array(&j, 0) || j.tok[0].size != 1) {
		fatal("manifest", "%s: manifest.json: kern loads archives of exactly one image - refusing",
		      l->path);
		json_free(&j);
		free(mj);
		return -1;
	}
	int img = json_elem(&j, 0, 0), layers = json_get(&j, img, "Layers");
	int tags = json_get(&j, img, "RepoTags");
	int n = json_is_array(&j, layers) ? j.tok[layers].size : -1;
	int rc = -1;
	char cfg_rel[MEMBER_MAX];
	if (n < 1 || n > LAYERS_MAX ||
	    json_string(&j, json_get(&j, img, "Config"), cfg_rel, sizeof cfg_rel) < 0) {
		fatal("manifest", "%s: manifest.json: Config or Layers missing (or over %d layers) - refusing",
		      l->path, LAYERS_MAX);
		goto out;
	}
	if (json_is_array(&j, tags) && j.tok[tags].size > 0)
		*ref_name = json_strdup(&j, json_elem(&j, tags, 0), 255);
	l->ndocker = n + 1;
	l->docker_digest = calloc((size_t)n + 1, sizeof *l->docker_digest);
	l->docker_path = calloc((size_t)n + 1, sizeof *l->docker_path);
	size_t cap = 512 + (size_t)n * 200;
	char *m = malloc(cap);
	if (!l->docker_digest || !l->docker_path || !m) {
		free(m);
		fatal("image", "out of memory");
		goto out;
	}
	uint64_t size;
	strcpy(l->docker_path[0], cfg_rel);
	if (hash_file(l->dir_fd, cfg_rel, l->docker_digest[0], &size) < 0) {
		fatal_errno("image", "%s: %s", l->path, cfg_rel);
		free(m);
		goto out;
	}
	size_t o = (size_t)snprintf(m, cap,
		"{\"schemaVersion\":2,\"mediaType\":\"" MT_DOCKER_MANIFEST "\",\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"%s\",\"size\":%llu},\"layers\":[",
		l->docker_digest[0], (unsigned long long)size);
	for (int i = 0; i < n; i++) {
		if (json_string(&j, json_elem(&j, layers, i), l->docker_path[i + 1], MEMBER_MAX) < 0 ||
		    hash_file(l->dir_fd, l->docker_path[i + 1], l->docker_digest[i + 1], &size) < 0) {
			fatal("image", "%s: layer %d: %s", l->path, i + 1, strerror(errno ? errno : EINVAL));
			free(m);
			goto out;
		}
		o += (size_t)snprintf(m + o, cap - o,
			"%s{\"mediaType\":\"application/vnd.docker.image.rootfs.diff.tar\",\"digest\":\"%s\",\"size\":%llu}",
			i ? "," : "", l->docker_digest[i + 1], (unsigned long long)size);
	}
	o += (size_t)snprintf(m + o, cap - o, "]}");
	l->manifest = m;
	l->mlen = o;
	unsigned char sum[32];
	sha256_sum(m, o, sum);
	digest_format(sum, l->mdigest);
	rc = 0;
out:
	json_free(&j);
	free(mj);
	return rc;
}

/* A tar input is unpacked (regular files with clean relative names only)
 * into a private directory in the cache root, then read as a directory. */
static int untar_input(const char *path, int into_fd)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int rc = -1;
	archive_read_support_format_tar(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		fatal("image", "%s: %s", path, archive_error_string(a));
		goto out;
	}
	int r;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (archive_entry_filetype(e) != AE_IFREG || !name)
			continue;
		while (name[0] == '.' && name[1] == '/')
			name += 2;
		char rel[MEMBER_MAX], *slash;
		if (strlen(name) >= sizeof rel || name[0] == '/' || strstr(name, "..")) {
			fatal("image", "%s: member '%s' is not a clean relative path - refusing", path, name);
			goto out;
		}
		strcpy(rel, name);
		if ((slash = strrchr(rel, '/'))) {
			*slash = 0;
			int d = mkdir_beneath(into_fd, rel, 0700);
			if (d < 0) {
				fatal_errno("image", "%s: mkdir %s", path, rel);
				goto out;
			}
			close(d);
		}
		int fd = open_beneath(into_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			fatal_errno("image", "%s: create %s", path, name);
			goto out;
		}
		const void *buf;
		size_t sz;
		la_int64_t off;
		int ok = 1;
		while ((r = archive_read_data_block(a, &buf, &sz, &off)) == ARCHIVE_OK)
			if (pwrite(fd, buf, sz, off) != (ssize_t)sz)
				ok = 0;
		close(fd);
		if (r != ARCHIVE_EOF || !ok) {
			fatal("image", "%s: %s: %s", path, name, ok ? archive_error_string(a) : strerror(errno));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		fatal("image", "%s: %s", path, archive_error_string(a));
		goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	return rc;
}

static int fetch_layout(void *ctx, int rootfs_fd, char **sidecar, size_t *slen)
{
	struct layout *l = ctx;
	struct blob_source src = {layout_open, l, "image"};
	return image_fetch(&src, l->ref, l->mdigest, l->manifest, l->mlen, rootfs_fd, sidecar, slen);
}

int image_load(const char *path, const char *tag, const char *arch)
{
	struct layout l;
	struct stat st;
	char tmpname[64] = "", root[4096], *ref_name = NULL, full[600];
	int root_fd = -1, rc = -1;
	const char *why;
	struct image_ref r;

	memset(&l, 0, sizeof l);
	l.dir_fd = -1;
	l.path = path;
	if (!arch)
		arch = host_arch();
	if (tag && image_ref_parse(tag, &r, &why) < 0) {
		fatal("image", "bad image reference '%s': %s", tag, why);
		return -1;
	}
	if (stat(path, &st) < 0) {
		fatal_errno("image", "%s", path);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		l.dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		if (kern_dir(KDIR_CACHE, root, sizeof root, 1) < 0 ||
		    (root_fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			fatal_errno("image", "cannot open the image cache directory");
			return -1;
		}
		snprintf(tmpname, sizeof tmpname, ".kern-load-%d", (int)getpid());
		rmtree_at(root_fd, tmpname);
		if (mkdirat(root_fd, tmpname, 0700) < 0 ||
		    (l.dir_fd = openat(root_fd, tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			fatal_errno("image", "mkdir %s/%s", root, tmpname);
			goto out;
		}
		if (untar_input(path, l.dir_fd) < 0)
			goto out;
	}
	if (l.dir_fd < 0) {
		fatal_errno("image", "open %s", path);
		goto out;
	}
	if (faccessat(l.dir_fd, "index.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    faccessat(l.dir_fd, "oci-layout", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		if (oci_pick(&l, tag, arch, &ref_name) < 0)
			goto out;
	} else if (faccessat(l.dir_fd, "manifest.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		if (docker_pick(&l, &ref_name) < 0)
			goto out;
	} else {
		fatal("image", "%s is neither an OCI image layout (oci-layout, index.json) nor a docker save archive (manifest.json)",
		      path);
		goto out;
	}
	const char *ref = tag;
	if (!ref) {
		/* A bare tag annotation ("latest") names no repository. */
		if (!ref_name || image_ref_parse(ref_name, &r, &why) < 0 || !strpbrk(ref_name, "/:")) {
			fatal("image", "%s does not record a usable image name%s%s%s; give one with --tag REF",
			      path, ref_name ? " ('" : "", ref_name ? ref_name : "", ref_name ? "')" : "");
			goto out;
		}
		snprintf(full, sizeof full, "%s", ref_name);
		ref = full;
	}
	l.ref = ref;
	rc = image_import(ref, fetch_layout, &l);
	if (rc == 0)
		note("loaded %s as '%s'", path, ref);
out:
	if (l.dir_fd >= 0)
		close(l.dir_fd);
	if (tmpname[0])
		rmtree_at(root_fd, tmpname);
	if (root_fd >= 0)
		close(root_fd);
	free(ref_name);
	free(l.manifest);
	free(l.docker_digest);
	free(l.docker_path);
	return rc;
}
