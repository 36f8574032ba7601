/* The box record reader (lib/state/records.c records_load, box-cli.md §7.1,
 * runtime state): `kern ps`, `kern exec` and `kern stop` read
 * <runtime>/instances/<name> back, and `kern exec` takes the environment,
 * working directory, user, caps, seccomp mode and ulimits it applies from it.
 * The input is the record file of box "fz". Properties: no crash (ASan,
 * UBSan); a record that loads is well formed (its name, bounded label and
 * ulimit counts, env entries present only after an "env" line); written back
 * by records_update and loaded again, it is the same record. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char runtime[64];

static void fail(const char *what)
{
	fprintf(stderr, "box_record property broken: %s\n", what);
	abort();
}

static void cleanup(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/instances/fz", runtime);
	unlink(p);
	static const char *const sub[] = {"instances", "claims", "scratch", "logs"};
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/%s", runtime, sub[i]);
		rmdir(p);
	}
	rmdir(runtime);
}

static void setup(void)
{
	snprintf(runtime, sizeof runtime, "/tmp/kern-fuzz-record-XXXXXX");
	if (!mkdtemp(runtime))
		abort();
	rmdir(runtime);	/* runtime_prepare makes it, private, as kern does */
	if (runtime_prepare(runtime) < 0)
		abort();
	atexit(cleanup);
}

static int same_vec(char *const *a, int na, char *const *b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

static int env_len(char **e)
{
	int n = 0;
	while (e && e[n])
		n++;
	return n;
}

static void compare(const struct box_record *a, const struct box_record *b)
{
	if (strcmp(a->name, b->name) || a->sup_pid != b->sup_pid || a->sup_start != b->sup_start ||
	    a->pid1 != b->pid1 || memcmp(a->nsfd, b->nsfd, sizeof a->nsfd) || a->created != b->created ||
	    strcmp(a->image, b->image) || strcmp(a->cgroup, b->cgroup) || strcmp(a->seccomp, b->seccomp) ||
	    a->caps != b->caps || strcmp(a->user, b->user) || strcmp(a->lower, b->lower) ||
	    strcmp(a->scratch, b->scratch) || a->byte1 != b->byte1 || strcmp(a->workdir, b->workdir) ||
	    strcmp(a->apparmor, b->apparmor))
		fail("a field changed when the record was written back");
	if (!same_vec(a->labels, a->nlabels, b->labels, b->nlabels) ||
	    !same_vec(a->ulimits, a->nulimits, b->ulimits, b->nulimits))
		fail("labels or ulimits changed when the record was written back");
	if (!a->env != !b->env || !same_vec(a->env, env_len(a->env), b->env, env_len(b->env)))
		fail("the environment changed when the record was written back");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	struct box_record rec, again;
	if (!runtime[0])
		setup();
	snprintf(path, sizeof path, "%s/instances/fz", runtime);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	if (records_load(runtime, "fz", &rec) < 0)
		return 0;
	if (strcmp(rec.name, "fz") != 0 || rec.nlabels < 0 || rec.nlabels > RECORD_MAX_LABELS ||
	    rec.nulimits < 0 || rec.nulimits > RECORD_MAX_ULIMITS)
		fail("a loaded record is malformed");
	for (int i = 0; rec.env && rec.env[i]; i++)
		if (strchr(rec.env[i], '\n') && !memchr(data, '\\', size))
			fail("an env entry holds a newline the file did not escape");
	if (records_update(runtime, &rec) < 0)
		fail("a loaded record cannot be written back");
	if (records_load(runtime, "fz", &again) < 0)
		fail("a record written back does not load");
	compare(&rec, &again);
	record_free(&rec);
	record_free(&again);
	return 0;
}
