/* What the v1 and v2 limit writers share: failure notes, cpu lists, the
 * walk up the tree for read-back verification (isolation.md §7.3). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/box.h"
#include "cgroup/io.h"

void cg_note_failure(struct cg_box *cg, enum cg_ctl c, const struct cg_hier *h, const char *file,
		     const char *value)
{
	int saved = errno;
	if (!(c == CG_MEMORY || c == CG_PIDS) || cg->failed) {
		cg->failed |= CG_BIT(c);
		return;
	}
	cg->failed |= CG_BIT(c);
	snprintf(cg->failure, sizeof cg->failure, "write %s to %s/%s: %s", value, h->dir, file,
		 strerror(saved));
	errno = saved;
}

/* A cpu list as a bitmap of up to 4096 cpus; -1 on junk. */
static int cpulist_bits(const char *s, unsigned char bits[512])
{
	memset(bits, 0, 512);
	while (*s) {
		unsigned a = 0, b;
		int nd = 0;
		for (; *s >= '0' && *s <= '9' && nd < 5; s++, nd++)
			a = a * 10 + (unsigned)(*s - '0');
		if (!nd || a >= 4096)
			return -1;
		b = a;
		if (*s == '-') {
			s++;
			b = 0;
			nd = 0;
			for (; *s >= '0' && *s <= '9' && nd < 5; s++, nd++)
				b = b * 10 + (unsigned)(*s - '0');
			if (!nd || b >= 4096 || b < a)
				return -1;
		}
		for (unsigned i = a; i <= b; i++)
			bits[i / 8] |= (unsigned char)(1u << (i % 8));
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
		else
			break;
	}
	return 0;
}

int cg_cpulist_equal(const char *a, const char *b)
{
	unsigned char x[512], y[512];
	return cpulist_bits(a, x) == 0 && cpulist_bits(b, y) == 0 && memcmp(x, y, sizeof x) == 0;
}

struct cg_hier *cg_hier_of(struct cg_box *cg, enum cg_ctl c)
{
	for (int i = 0; i < cg->nh; i++)
		if (cg->h[i].ctls & CG_BIT(c))
			return &cg->h[i];
	return NULL;
}

int cg_any_up(const struct cg_hier *h, int (*holds)(int dirfd, const void *arg), const void *arg)
{
	char dir[PATH_MAX];
	size_t mlen = strlen(h->mount);
	snprintf(dir, sizeof dir, "%s", h->dir);
	for (;;) {
		int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			int ok = holds(fd, arg);
			close(fd);
			if (ok)
				return 1;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < mlen)
			return 0;
		*slash = 0;
	}
}

struct file_cap {
	const char *file;
	uint64_t want;
};

static int file_caps(int dirfd, const void *arg)
{
	const struct file_cap *c = arg;
	uint64_t v;
	return cg_read_u64(dirfd, c->file, &v) == 0 && cg_caps(v, c->want);
}

int cg_capped_up(const struct cg_hier *h, const char *file, uint64_t want)
{
	struct file_cap c = {file, want};
	return cg_any_up(h, file_caps, &c);
}
