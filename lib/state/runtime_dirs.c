/* The box records across runtime directories: kern box records a box in one
 * (state/records.c), but the caller's running boxes may be spread over the
 * candidates kern_runtime_each() names, since an older kern preferred
 * /tmp/kern-<uid> to /dev/shm (issue 16). ps, stop, exec, recover and the
 * image cache's sweep look in all of them; a claim refuses a name a box
 * in any of them holds. */
#include <string.h>
#include <sys/stat.h>

#include "base/xdg.h"
#include "state/records.h"

struct each_ctx {
	void (*fn)(const struct box_record *, void *);
	void *ctx;
	int live;
};

static int each_dir(const char *dir, void *p)
{
	struct each_ctx *e = p;
	e->live += records_each(dir, e->fn, e->ctx);
	return 0;
}

int records_each_all(void (*fn)(const struct box_record *, void *), void *ctx)
{
	struct each_ctx e = {fn, ctx, 0};
	kern_runtime_each(each_dir, &e);
	return e.live;
}

struct find_ctx {
	const char *name;
	char *out;
	size_t len;
	struct stat skip;	/* st_ino 0: none */
};

static int holds_live(const char *dir, void *p)
{
	struct find_ctx *f = p;
	struct stat st;
	if (f->skip.st_ino && stat(dir, &st) == 0 && st.st_dev == f->skip.st_dev &&
	    st.st_ino == f->skip.st_ino)
		return 0;
	if (records_live_at(dir, f->name) != 1 || strlen(dir) >= f->len)
		return 0;
	strcpy(f->out, dir);
	return 1;
}

int records_find(const char *name, char *runtime, size_t len)
{
	struct find_ctx f = {.name = name, .out = runtime, .len = len};
	return kern_runtime_each(holds_live, &f) ? 0 : -1;
}

int records_live_elsewhere(const char *runtime, const char *name)
{
	char where[4096];
	struct find_ctx f = {.name = name, .out = where, .len = sizeof where};
	if (stat(runtime, &f.skip) < 0)
		return 0;
	return kern_runtime_each(holds_live, &f);
}
