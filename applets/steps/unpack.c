/* kern-unpack: extract one image layer into a directory, vetting every member */
#include <errno.h>
#include <fcntl.h>
#include <mbedtls/sha256.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "layer/unpack.h"
#include "steps/steps.h"

static const char usage[] =
"usage: kern-unpack [--diff-id sha256:HEX] [--digest sha256:HEX] LAYER DIR [-- NEXT...]\n"
"\n"
"Extract one image layer (gzip, zstd or plain tar, told apart by magic) into\n"
"DIR exactly as kern-pull does: every member is vetted while the stream is\n"
"read, the layer is staged inside DIR and merged into it (whiteouts applied)\n"
"only once it is complete and its digests match. Prints the layer's diff_id\n"
"(sha256 of the uncompressed tar) on stdout, then runs NEXT if given.\n"
"LAYER '-' reads standard input; DIR is created if missing.\n"
"\n"
"  --diff-id D   refuse the layer unless its diff_id is D\n"
"  --digest D    refuse the layer unless the sha256 of its compressed bytes is D\n";

struct file_reader {
	int fd;
	int hashing;
	mbedtls_sha256_context sha;
	int err;
};

static ssize_t file_read(void *ctx, void *buf, size_t len)
{
	struct file_reader *f = ctx;
	for (;;) {
		ssize_t n = read(f->fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			f->err = errno;
			return -1;
		}
		if (n > 0 && f->hashing)
			mbedtls_sha256_update_ret(&f->sha, buf, (size_t)n);
		return n;
	}
}

static void hex32(const unsigned char d[32], char out[65])
{
	for (size_t i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* "sha256:<64 hex>" -> the hex part, or NULL. */
static const char *digest_hex(const char *d)
{
	if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d + 7) != 64)
		return NULL;
	for (const char *p = d + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return NULL;
	return d + 7;
}

/* The staging name needs a digest; a file on disk has none yet. One fixed
 * name per DIR is enough (runs on a DIR are serialised by the lock), and
 * it lets the next run remove what a killed one left behind. */
static void run_hex(char out[65])
{
	unsigned char d[32];
	static const char seed[] = "kern-unpack staging";
	mbedtls_sha256_ret((const unsigned char *)seed, sizeof seed - 1, d, 0);
	hex32(d, out);
}

static int unpack_main(int argc, char **argv)
{
	struct unpack_step c = unpack_step_defaults;
	char **next = NULL;
	int i = step_args(&unpack_step_flags, argc, argv, &c);

	if (i < argc)
		next = argv + i + 1;
	const char *want_diff = c.diff_id, *want_digest = c.digest, *layer = c.layer, *dir = c.dir;
	if (!layer || !dir) {
		step_fatal(&unpack_step_flags, "LAYER and DIR are required");
		die_hint("run `kern-unpack --help`");
	}
	if (next && !*next)
		step_die(&unpack_step_flags, "nothing to run after '--'");
	if ((want_diff && !digest_hex(want_diff)) || (want_digest && !digest_hex(want_digest)))
		step_die(&unpack_step_flags, "a digest must be sha256: and 64 lowercase hex digits");

	struct file_reader f = {.fd = 0, .hashing = want_digest != NULL};
	if (strcmp(layer, "-") != 0 && (f.fd = open(layer, O_RDONLY | O_CLOEXEC)) < 0)
		die_errno("image", "open layer '%s'", layer);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die_errno("image", "mkdir '%s'", dir);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	if (dfd < 0) {
		int e = errno;
		int link = lstat(dir, &sb) == 0 && S_ISLNK(sb.st_mode);
		die("image", "open '%s': %s", dir, link ? "it is a symlink" : strerror(e));
	}
	/* One layer at a time per directory, like the per-image pull lock. */
	if (flock(dfd, LOCK_EX) < 0)
		die_errno("image", "lock '%s'", dir);
	mbedtls_sha256_init(&f.sha);
	mbedtls_sha256_starts_ret(&f.sha, 0);

	struct layer_reader r = {file_read, &f};
	unsigned char diff[32], blob[32];
	char hex[65], diff_hex[65], why[512];
	run_hex(hex);
	if (unpack_stage(&r, dfd, 0, hex, &unpack_default_limits, diff, why, sizeof why) < 0) {
		if (f.err)
			die("image", "layer '%s': read: %s", layer, strerror(f.err));
		die("image", "layer '%s': %s", layer, why);
	}
	hex32(diff, diff_hex);
	if (want_digest) {
		char blob_hex[65];
		mbedtls_sha256_finish_ret(&f.sha, blob);
		hex32(blob, blob_hex);
		if (strcmp(blob_hex, digest_hex(want_digest)) != 0) {
			unpack_abort(dfd, 0, hex);
			die("image", "layer '%s': blob digest mismatch (expected %s, got sha256:%s) - refusing",
			    layer, want_digest, blob_hex);
		}
	}
	if (want_diff && strcmp(diff_hex, digest_hex(want_diff)) != 0) {
		unpack_abort(dfd, 0, hex);
		die("image", "layer '%s': diff_id mismatch (expected %s, got sha256:%s) - refusing",
		    layer, want_diff, diff_hex);
	}
	if (unpack_commit(dfd, 0, hex, why, sizeof why) < 0)
		die("image", "layer '%s': %s", layer, why);
	mbedtls_sha256_free(&f.sha);
	close(dfd);
	if (f.fd > 0)
		close(f.fd);
	printf("sha256:%s\n", diff_hex);
	if (!next)
		return fflush(stdout) == 0 ? 0 : EXIT_CLI;
	fflush(stdout);
	execvp(next[0], next);
	int e = errno;
	step_fatal(&unpack_step_flags, "cannot run '%s': %s", next[0], strerror(e));
	return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}

APPLET(unpack, "extract one image layer into a directory, vetting every member", usage, unpack_main);
