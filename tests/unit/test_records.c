/* Box records (lib/state/records.c) in a scratch runtime directory: the
 * exact bytes a claim writes, values escaped, and a record larger than
 * the page it is composed in (long environment values) written whole and
 * read back. The life of real boxes is tests/bats/box_life.bats. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "base/rmtree.h"
#include "state/records.h"
#include "unit.h"

static char *runtime_dir(void)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/kern-unit-records.XXXXXX");
	if (!mkdtemp(dir))
		return NULL;
	return runtime_prepare(dir) == 0 ? dir : NULL;
}

static void fill(struct box_record *rec, const char *name)
{
	memset(rec, 0, sizeof *rec);
	snprintf(rec->name, sizeof rec->name, "%s", name);
	rec->sup_pid = getpid();
	rec->sup_start = proc_start_time(getpid());
	rec->created = 1700000000;
	snprintf(rec->image, sizeof rec->image, "host");
	snprintf(rec->cgroup, sizeof rec->cgroup, "v1 1 /sys/fs/cgroup/memory/kern/kern-box-%s-1", name);
	snprintf(rec->seccomp, sizeof rec->seccomp, "allowlist");
	rec->caps = 0x110bd84efffULL;
	snprintf(rec->lower, sizeof rec->lower, "/a\tb\\c\nd");
	snprintf(rec->scratch, sizeof rec->scratch, "/run/s");
	snprintf(rec->workdir, sizeof rec->workdir, "/");
}

TEST(records_claim_writes_the_record_bytes)
{
	char *rt = runtime_dir(), path[256], got[4096], want[4096];
	struct box_record rec;
	char *env[] = {"A=1", "B=tab\there", NULL};
	CHECK(rt != NULL);
	if (!rt)
		return;
	fill(&rec, "bytes");
	rec.env = env;
	CHECK(records_claim(rt, &rec) == 0);
	snprintf(path, sizeof path, "%s/instances/bytes", rt);
	long n = read_small_file(path, got, sizeof got);
	snprintf(want, sizeof want,
		 "name\tbytes\nsupervisor\t%d\nstart\t%llu\npid1\t0\ncreated\t1700000000\nimage\thost\n"
		 "cgroup\tv1 1 /sys/fs/cgroup/memory/kern/kern-box-bytes-1\nseccomp\tallowlist\n"
		 "caps\t00000110bd84efff\nuser\t\nshifted\t0\nrestrict_sxid\t0\nlower\t/a\\tb\\\\c\\nd\n"
		 "scratch\t/run/s\nbyte1\t0\nworkdir\t/\napparmor\t\nenv\t\nenvvar\tA=1\n"
		 "envvar\tB=tab\\there\n",
		 (int)rec.sup_pid, rec.sup_start);
	CHECK(n > 0 && strcmp(got, want) == 0);
	if (n <= 0 || strcmp(got, want) != 0)
		printf("# got:\n%s# want:\n%s", n > 0 ? got : "", want);
	struct box_record back;
	CHECK(records_load(rt, "bytes", &back) == 0);
	CHECK_STR(back.lower, "/a\tb\\c\nd");
	CHECK(back.env && back.env[1] && strcmp(back.env[1], "B=tab\there") == 0 && !back.env[2]);
	record_free(&back);
	rmtree(rt);
}

TEST(records_larger_than_a_page_are_written_whole)
{
	char *rt = runtime_dir();
	struct box_record rec, back;
	static char big[3][6000];
	char *env[4];
	CHECK(rt != NULL);
	if (!rt)
		return;
	fill(&rec, "big");
	for (int i = 0; i < 3; i++) {
		snprintf(big[i], sizeof big[i], "V%d=", i);
		memset(big[i] + 3, 'a' + i, sizeof big[i] - 4);
		big[i][sizeof big[i] - 1] = 0;
		big[i][100] = '\t';
		env[i] = big[i];
	}
	env[3] = NULL;
	rec.env = env;
	CHECK(records_claim(rt, &rec) == 0);
	/* The update path (PID 1, namespaces) writes the same way. */
	rec.pid1 = 42;
	CHECK(records_update(rt, &rec) == 0);
	CHECK(records_load(rt, "big", &back) == 0);
	CHECK(back.pid1 == 42);
	for (int i = 0; i < 3; i++)
		CHECK(back.env && back.env[i] && strcmp(back.env[i], big[i]) == 0);
	CHECK(back.env && back.env[3] == NULL);
	record_free(&back);
	/* A small record after a large one: nothing of the large one left. */
	char *small[] = {"S=1", NULL};
	rec.env = small;
	CHECK(records_update(rt, &rec) == 0);
	CHECK(records_load(rt, "big", &back) == 0);
	CHECK(back.env && strcmp(back.env[0], "S=1") == 0 && back.env[1] == NULL);
	record_free(&back);
	rmtree(rt);
}

static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

TEST(records_live_at_tells_none_dead_malformed_and_live_apart)
{
	char *rt = runtime_dir(), path[256];
	struct box_record rec;
	CHECK(rt != NULL);
	if (!rt)
		return;
	CHECK(records_live_at(rt, "nobody") == -1);
	fill(&rec, "mine");
	CHECK(records_claim(rt, &rec) == 0);
	CHECK(records_live_at(rt, "mine") == 1);
	/* A second claim of a live name is refused; a dead one's is taken over. */
	CHECK(records_claim(rt, &rec) != 0);
	snprintf(path, sizeof path, "%s/instances/dead", rt);
	CHECK(put_file(path, "name\tdead\nsupervisor\t2147483646\nstart\t1\n") == 0);
	CHECK(records_live_at(rt, "dead") == 0);
	fill(&rec, "dead");
	CHECK(records_claim(rt, &rec) == 0 && records_live_at(rt, "dead") == 1);
	snprintf(path, sizeof path, "%s/instances/junk", rt);
	CHECK(put_file(path, "no tab here\n") == 0);
	CHECK(records_live_at(rt, "junk") == 0);
	CHECK(records_live_at(rt, "../x") == -1);
	rmtree(rt);
}
