/* FZ-3: the tar vetter, filter, extractor and merge on arbitrary
 * decompressed bytes. Each input is one layer, or two separated by
 * "\n--KERN-LAYER--\n" (so the merge meets an earlier layer's symlinks).
 * Property: no crash (ASan, UBSan), and nothing outside the staging
 * directory changes: the sandbox holds exactly canary, outside/ and
 * root/, the canary keeps its bytes, outside/ stays empty, and no
 * staging directory survives. Run it in a user namespace (make fuzz
 * does) so a bug cannot touch the host as root. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/tree.h"
#include "layer/unpack.h"

static const struct unpack_limits limits = {1 << 20, 4 << 20, 2000};
static const char SEP[] = "\n--KERN-LAYER--\n";
static const char HEX[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

struct mem {
	const uint8_t *p;
	size_t n, off;
};

/* Odd-sized reads, to cross every boundary the codec and raw pass have. */
static ssize_t mem_read(void *ctx, void *buf, size_t len)
{
	struct mem *m = ctx;
	size_t left = m->n - m->off, want = 1 + (m->off * 131 + 17) % 3001;
	if (want > len)
		want = len;
	if (want > left)
		want = left;
	memcpy(buf, m->p + m->off, want);
	m->off += want;
	return (ssize_t)want;
}

static int sandbox = -1;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_layer: %s\n", what);
	abort();
}

static void check_sandbox(int root, int staged)
{
	DIR *d = fdopendir(openat(sandbox, ".", O_RDONLY | O_DIRECTORY));
	struct dirent *e;
	int n = 0;
	if (!d)
		die("cannot list the sandbox");
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strcmp(e->d_name, "canary") && strcmp(e->d_name, "outside") && strcmp(e->d_name, "root"))
			die("a file appeared outside the root");
		n++;
	}
	closedir(d);
	if (n != 3)
		die("something outside the root went away");
	char buf[32] = {0};
	int fd = openat(sandbox, "canary", O_RDONLY | O_NOFOLLOW);
	if (fd < 0 || read(fd, buf, sizeof buf - 1) != 7 || strcmp(buf, "canary\n"))
		die("the canary changed");
	close(fd);
	struct stat sb;
	if (fstatat(sandbox, "outside", &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode) ||
	    sb.st_nlink != 2)
		die("outside/ changed");
	d = fdopendir(openat(sandbox, "outside", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
	if (!d)
		die("outside/ is no longer a directory");
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			die("a file appeared in outside/");
	closedir(d);
	d = fdopendir(openat(root, ".", O_RDONLY | O_DIRECTORY));
	int stg = 0;
	while (d && (e = readdir(d)))
		stg += !strncmp(e->d_name, ".kern-stg-", 10);
	if (stg != staged)
		die(staged ? "no staging directory after a successful stage" : "a staging directory survived");
	if (d)
		closedir(d);
}

static char sandbox_path[] = "/tmp/kern-fuzz-layer-XXXXXX";

/* The sandbox goes when the fuzzer exits (each make check replay made one). */
static void cleanup(void)
{
	tree_rm_at(sandbox, "root");
	unlinkat(sandbox, "canary", 0);
	unlinkat(sandbox, "outside", AT_REMOVEDIR);
	rmdir(sandbox_path);
}

static void setup(void)
{
	if (!mkdtemp(sandbox_path))
		die("mkdtemp");
	atexit(cleanup);
	sandbox = open(sandbox_path, O_RDONLY | O_DIRECTORY);
	if (sandbox < 0 || mkdirat(sandbox, "outside", 0755) < 0)
		die("sandbox");
	int fd = openat(sandbox, "canary", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, "canary\n", 7) != 7)
		die("canary");
	close(fd);
	umask(022);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char diff[32];
	char why[512];
	if (sandbox < 0)
		setup();
	if (mkdirat(sandbox, "root", 0755) < 0)
		die("mkdir root");
	int root = openat(sandbox, "root", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (root < 0)
		die("open root");

	const uint8_t *sep = memmem(data, size, SEP, sizeof SEP - 1);
	struct mem layers[2] = {{data, sep ? (size_t)(sep - data) : size, 0}, {NULL, 0, 0}};
	if (sep)
		layers[1] = (struct mem){sep + sizeof SEP - 1, size - (size_t)(sep - data) - (sizeof SEP - 1), 0};
	for (int i = 0; i < (sep ? 2 : 1); i++) {
		struct layer_reader r = {mem_read, &layers[i]};
		if (unpack_stage(&r, root, i, HEX, &limits, diff, why, sizeof why) != 0) {
			check_sandbox(root, 0);
			break;
		}
		check_sandbox(root, 1);
		if (unpack_commit(root, i, HEX, why, sizeof why) != 0) {
			check_sandbox(root, 0);
			break;
		}
		check_sandbox(root, 0);
	}
	close(root);
	if (tree_rm_at(sandbox, "root") != 0)
		die("cannot remove the root");
	return 0;
}
