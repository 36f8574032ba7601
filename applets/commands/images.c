/* kern-images: list cached images */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/xdg.h"
#include "image/cache.h"
#include "image/sidecar.h"

static const char usage[] =
"usage: kern images [-q]\n"
"\n"
"List the complete entries of the image cache: reference, manifest digest,\n"
"size on disk and age. -q prints the references only.\n";

static unsigned long long du_total;

static int du_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path; (void)flag; (void)ftw;
	du_total += (unsigned long long)st->st_blocks * 512;
	return 0;
}

static void human_size(unsigned long long b, char *out, size_t len)
{
	if (b >= 1ULL << 30)
		snprintf(out, len, "%.1f GiB", (double)b / (1 << 30));
	else if (b >= 1ULL << 20)
		snprintf(out, len, "%.1f MiB", (double)b / (1 << 20));
	else
		snprintf(out, len, "%.1f KiB", (double)b / 1024);
}

static void human_age(time_t secs, char *out, size_t len)
{
	if (secs < 120)
		snprintf(out, len, "%lds", (long)secs);
	else if (secs < 7200)
		snprintf(out, len, "%ldm", (long)secs / 60);
	else if (secs < 172800)
		snprintf(out, len, "%ldh", (long)secs / 3600);
	else
		snprintf(out, len, "%ldd", (long)secs / 86400);
}

struct row {
	char ref[300], digest[80], size[32], age[32];
};

static int by_ref(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->ref, ((const struct row *)b)->ref);
}

static int images_main(int argc, char **argv)
{
	int quiet = 0;
	char root[4096];
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
			quiet = 1;
		} else {
			die("image", "unknown argument '%s'", argv[i]);
		}
	}
	struct row *rows = NULL;
	size_t n = 0;
	if (kern_dir(KDIR_CACHE, root, sizeof root, 0) == 0) {
		struct cache c = {.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
		snprintf(c.root, sizeof c.root, "%s", root);
		DIR *d = c.root_fd >= 0 ? opendir(root) : NULL;
		struct dirent *e;
		while (d && (e = readdir(d))) {
			size_t l = strlen(e->d_name), len;
			const char *what;
			if (l < 4 || strcmp(e->d_name + l - 3, ".ok") != 0 || l - 3 >= sizeof c.key)
				continue;
			snprintf(c.key, sizeof c.key, "%.*s", (int)(l - 3), e->d_name);
			if (cache_state(&c, &what) != ENTRY_COMPLETE)
				continue;
			struct row r = {0};
			char *ok = cache_read_file(&c, e->d_name, 4096, &len), name[400], path[4500];
			if (!ok)
				continue;
			snprintf(r.ref, sizeof r.ref, "%.*s", (int)strcspn(ok, "\n"), ok);
			free(ok);
			struct image_config cfg;
			cache_name(&c, ".image", name, sizeof name);
			char *img = cache_read_file(&c, name, 16 << 20, &len);
			if (img && sidecar_parse(img, len, &cfg) == 0) {
				snprintf(r.digest, sizeof r.digest, "%s", cfg.digest);
				image_config_free(&cfg);
			}
			free(img);
			du_total = 0;
			snprintf(path, sizeof path, "%s/%s", root, c.key);
			nftw(path, du_one, 32, FTW_PHYS);
			human_size(du_total, r.size, sizeof r.size);
			struct stat st;
			if (fstatat(c.root_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				human_age(time(NULL) - st.st_mtime, r.age, sizeof r.age);
			struct row *nr = realloc(rows, (n + 1) * sizeof *rows);
			if (!nr)
				break;
			rows = nr;
			rows[n++] = r;
		}
		if (d)
			closedir(d);
		cache_close(&c);
	}
	if (n > 1)
		qsort(rows, n, sizeof *rows, by_ref);
	if (!quiet)
		printf("%-48s %-19s %10s %5s\n", "REFERENCE", "DIGEST", "SIZE", "AGE");
	for (size_t i = 0; i < n; i++) {
		if (quiet)
			printf("%s\n", rows[i].ref);
		else
			printf("%-48s %-19.19s %10s %5s\n", rows[i].ref, rows[i].digest, rows[i].size,
			       rows[i].age);
	}
	free(rows);
	return 0;
}

APPLET(images, "list cached images", usage, images_main);
