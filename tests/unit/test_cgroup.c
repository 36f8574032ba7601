/* The cgroup module on fixtures: layout detection from mountinfo files
 * (this host's hybrid layout, pure v2, co-mounted cpu,cpuacct, a container
 * view, mounts that only look like cgroups by name), the v2 placement
 * decisions on a directory tree standing in for cgroupfs, read-back
 * verification, the orphan sweep. The real kernel is exercised by
 * tests/bats/cgroup.bats. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "cgroup/box.h"
#include "cgroup/io.h"
#include "cgroup/layout.h"
#include "unit.h"

#define FIX "tests/unit/fixtures/cgroup/"

static struct cg_layout layout_of(const char *name)
{
	struct cg_layout l;
	char mi[256], cg[256];
	snprintf(mi, sizeof mi, FIX "%s.mountinfo", name);
	snprintf(cg, sizeof cg, FIX "%s.cgroup", name);
	CHECK(cg_detect_from(mi, &l) == 0);
	if (access(cg, F_OK) == 0)
		CHECK(cg_self_from(cg, &l) == 0);
	return l;
}

TEST(cgroup_detects_the_hybrid_host_as_v1)
{
	struct cg_layout l = layout_of("hybrid");
	struct cg_mount *m;
	CHECK(l.version == 1);
	CHECK(l.nmounts == 4);
	CHECK((m = cg_mount_of(&l, CG_MEMORY)) && strcmp(m->dir, "/sys/fs/cgroup/memory") == 0);
	CHECK(m && strcmp(m->self, "/sys/fs/cgroup/memory/process_api/fe6e30a4") == 0);
	CHECK((m = cg_mount_of(&l, CG_PIDS)) && strcmp(m->self, "/sys/fs/cgroup/pids") == 0);
	CHECK((m = cg_mount_of(&l, CG_CPU)) && strcmp(m->dir, "/sys/fs/cgroup/cpu") == 0);
	CHECK(m && m->ctls == CG_BIT(CG_CPU));
	CHECK((m = cg_mount_of(&l, CG_CPUSET)) && strcmp(m->dir, "/sys/fs/cgroup/cpuset") == 0);
	for (int i = 0; i < l.nmounts; i++)
		CHECK(strstr(l.mounts[i].dir, "unified") == NULL);
}

TEST(cgroup_detects_pure_v2)
{
	struct cg_layout l = layout_of("v2");
	CHECK(l.version == 2 && l.nmounts == 1);
	CHECK_STR(l.mounts[0].dir, "/sys/fs/cgroup");
	CHECK(l.mounts[0].ctls == CG_ALL);
	CHECK_STR(l.mounts[0].self,
		  "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope");
}

TEST(cgroup_comounted_cpu_cpuacct_is_one_hierarchy)
{
	struct cg_layout l = layout_of("cpuacct-comount");
	struct cg_mount *m = cg_mount_of(&l, CG_CPU);
	CHECK(l.version == 1 && l.nmounts == 3);
	CHECK(m && strcmp(m->dir, "/sys/fs/cgroup/cpu,cpuacct") == 0);
	CHECK(m && strcmp(m->self, "/sys/fs/cgroup/cpu,cpuacct/user.slice") == 0);
	CHECK(cg_mount_of(&l, CG_CPUSET) == NULL);
	m = cg_mount_of(&l, CG_MEMORY);
	CHECK(m && strcmp(m->self, "/sys/fs/cgroup/memory/user.slice/user-1000.slice/session-2.scope") == 0);
}

TEST(cgroup_container_view_maps_self_below_the_mount_root)
{
	struct cg_layout l = layout_of("container");
	struct cg_mount *m = cg_mount_of(&l, CG_PIDS);
	CHECK(l.version == 1);
	CHECK(m && strcmp(m->root, "/docker/abc") == 0);
	CHECK(m && strcmp(m->self, "/sys/fs/cgroup/pids/inner") == 0);
	/* A cgroup outside what the mount shows is not reachable through it. */
	m = cg_mount_of(&l, CG_MEMORY);
	CHECK(m && m->self[0] == 0);
}

TEST(cgroup_never_guesses_from_names)
{
	struct cg_layout l = layout_of("names-only");
	/* A tmpfs called memory and a named hierarchy called pids are not
	 * controllers; the hybrid's cgroup2 at unified is ignored. */
	CHECK(l.version == 0 && l.nmounts == 0);
}

TEST(cgroup_overmount_escapes_and_junk)
{
	struct cg_layout l = layout_of("overmounted");
	struct cg_mount *m = cg_mount_of(&l, CG_MEMORY);
	/* The tmpfs mounted over the cgroup2 hides it: v1. */
	CHECK(l.version == 1);
	CHECK(m && strcmp(m->dir, "/sys/fs/cgroup/mem ory") == 0);
	CHECK(cg_mount_of(&l, CG_PIDS) == NULL);
	CHECK(cg_detect_from(FIX "does-not-exist", &l) < 0 && l.version == 0);
}

/* The fixture's mountinfo behind `filler` lines of other mounts, with
 * or without its last newline, in a temporary file. */
static void padded_mountinfo(char *out, size_t len, int filler, int last_newline)
{
	char buf[8192];
	long n = read_small_file(FIX "hybrid.mountinfo", buf, sizeof buf);
	snprintf(out, len, "/tmp/kern-unit-mountinfo.XXXXXX");
	int fd = mkstemp(out);
	CHECK(fd >= 0 && n > 0);
	if (fd < 0 || n <= 0)
		return;
	for (int i = 0; i < filler; i++) {
		char line[256];
		int k = snprintf(line, sizeof line,
				 "%d 26 0:%d / /var/lib/containers/storage/overlay/%064d/merged rw,relatime - "
				 "overlay overlay rw\n", 1000 + i, 100 + i, i);
		CHECK(write(fd, line, (size_t)k) == k);
	}
	if (!last_newline && buf[n - 1] == '\n')
		n--;
	CHECK(write(fd, buf, (size_t)n) == n);
	close(fd);
}

TEST(cgroup_detects_the_same_from_a_large_or_unterminated_mountinfo)
{
	struct cg_layout want = layout_of("hybrid"), l;
	/* 0: read whole in one buffer; 400 (about 60 KiB): more than that
	 * buffer holds, read through stdio; each with and without the last
	 * line's newline. */
	static const int fillers[] = {0, 400};
	for (size_t f = 0; f < 2; f++)
		for (int nl = 0; nl < 2; nl++) {
			char path[64];
			padded_mountinfo(path, sizeof path, fillers[f], nl);
			CHECK(cg_detect_from(path, &l) == 0);
			CHECK(cg_self_from(FIX "hybrid.cgroup", &l) == 0);
			CHECK(l.version == want.version && l.nmounts == want.nmounts);
			for (int i = 0; i < l.nmounts && i < want.nmounts; i++) {
				CHECK_STR(l.mounts[i].dir, want.mounts[i].dir);
				CHECK_STR(l.mounts[i].root, want.mounts[i].root);
				CHECK_STR(l.mounts[i].self, want.mounts[i].self);
				CHECK(l.mounts[i].ctls == want.mounts[i].ctls && l.mounts[i].dev == want.mounts[i].dev);
			}
			unlink(path);
		}
}

TEST(cgroup_cpu_lists_compare_by_cpus)
{
	CHECK(cg_cpulist_equal("0-3", "0,1,2,3"));
	CHECK(cg_cpulist_equal("0-1,3\n", "3,0-1"));
	CHECK(!cg_cpulist_equal("0-1", "0-2"));
	CHECK(!cg_cpulist_equal("0-1", ""));
	CHECK(!cg_cpulist_equal("1-0", "0-1"));
	CHECK(!cg_cpulist_equal("x", "x"));
	CHECK(!cg_cpulist_equal("5000", "5000"));
}

/* A directory tree standing in for cgroupfs. */
static char tree[64];

static void put(const char *rel, const char *content)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", tree, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
		close(fd);
	}
}

static void dir(const char *rel)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", tree, rel);
	CHECK(mkdir(p, 0755) == 0);
}

static void cgdir(const char *rel, const char *subtree)
{
	char f[512];
	if (rel[0])
		dir(rel);
	snprintf(f, sizeof f, "%s%scgroup.controllers", rel, rel[0] ? "/" : "");
	put(f, "cpuset cpu memory pids");
	snprintf(f, sizeof f, "%s%scgroup.subtree_control", rel, rel[0] ? "/" : "");
	put(f, subtree);
	snprintf(f, sizeof f, "%s%scgroup.procs", rel, rel[0] ? "/" : "");
	put(f, "");
}

static void new_tree(void)
{
	snprintf(tree, sizeof tree, "/tmp/kern-unit-cg.XXXXXX");
	CHECK(mkdtemp(tree) != NULL);
	cgdir("", "cpu memory pids");
}

static void drop_tree(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tree);
	CHECK(system(cmd) == 0);
}

static struct cg_layout fake_v2(const char *self_rel)
{
	struct cg_layout l;
	memset(&l, 0, sizeof l);
	l.version = 2;
	l.nmounts = 1;
	snprintf(l.mounts[0].dir, sizeof l.mounts[0].dir, "%s", tree);
	snprintf(l.mounts[0].root, sizeof l.mounts[0].root, "/");
	snprintf(l.mounts[0].self, sizeof l.mounts[0].self, "%s%s%s", tree, self_rel[0] ? "/" : "",
		 self_rel);
	l.mounts[0].ctls = CG_ALL;
	return l;
}

static struct cg_box *fake_box(uid_t uid)
{
	struct cg_box *cg = calloc(1, sizeof *cg);
	cg->uid = uid;
	for (int i = 0; i < CG_NCTL; i++)
		cg->h[i].fd = -1;
	return cg;
}

static void free_box(struct cg_box *cg)
{
	for (int i = 0; i < cg->nh; i++)
		if (cg->h[i].fd >= 0)
			close(cg->h[i].fd);
	free(cg);
}

TEST(cgroup_v2_root_places_under_kern_slice)
{
	struct cg_limits req = {0};
	struct cg_box *cg = fake_box(0);
	char want[512];
	new_tree();
	cgdir("kern.slice", "cpu memory pids");
	cgdir("system.slice", "");
	struct cg_layout l = fake_v2("system.slice");
	CHECK(cg_place(cg, &l, "b1", 4242, &req) == 0);
	CHECK(cg->place == CG_PLACE_V2_ROOT && cg->nh == 1);
	snprintf(want, sizeof want, "%s/kern.slice/kern-box-b1-4242", tree);
	CHECK_STR(cg->h[0].dir, want);
	CHECK(cg->h[0].ctls == (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS) | CG_BIT(CG_CPU)));
	struct cg_box *found = fake_box(0);
	CHECK(cg_find(found, &l, "b1", 4242) == 0 && found->nh == 1 && found->place == CG_PLACE_V2_ROOT);
	CHECK_STR(found->h[0].dir, want);
	free_box(found);
	free_box(cg);
	drop_tree();
}

TEST(cgroup_v2_rootless_uses_a_delegated_ancestor_not_a_systemd_unit)
{
	struct cg_limits req = {.no_scope = 1};
	struct cg_box *cg = fake_box(geteuid() == 0 ? 4321 : geteuid());
	char want[512];
	new_tree();
	cgdir("deleg", "memory pids");
	cgdir("deleg/session", "");
	put("deleg/session/cgroup.procs", "1\n2\n");
	if (geteuid() == 0) {
		char p[512];
		snprintf(p, sizeof p, "%s/deleg", tree);
		CHECK(chown(p, 4321, 4321) == 0);
		snprintf(p, sizeof p, "%s/deleg/cgroup.procs", tree);
		CHECK(chown(p, 4321, 4321) == 0);
		snprintf(p, sizeof p, "%s/deleg/session", tree);
		CHECK(chown(p, 4321, 4321) == 0);
	}
	struct cg_layout l = fake_v2("deleg/session");
	CHECK(cg_place(cg, &l, "b2", 77, &req) == 0);
	CHECK(cg->place == CG_PLACE_V2_DELEGATED && cg->nh == 1);
	snprintf(want, sizeof want, "%s/deleg/kern-box-b2-77", tree);
	CHECK_STR(cg->h[0].dir, want);
	free_box(cg);
	/* The same ancestor tagged as a systemd unit is someone else's. */
	snprintf(want, sizeof want, "%s/deleg/kern-box-b2-77", tree);
	CHECK(rmdir(want) == 0);
	snprintf(want, sizeof want, "%s/deleg", tree);
	CHECK(setxattr(want, "user.invocation_id", "0123", 4, 0) == 0);
	cg = fake_box(geteuid() == 0 ? 4321 : geteuid());
	CHECK(cg_place(cg, &l, "b2", 77, &req) == 0);
	CHECK(cg->nh == 0 && cg->why == CG_WHY_NO_SCOPE);
	free_box(cg);
	drop_tree();
}

TEST(cgroup_v2_rootless_with_nothing_delegated_stays_uncapped)
{
	struct cg_limits req = {0};
	struct cg_box *cg = fake_box(4321);
	new_tree();
	cgdir("user.slice", "memory pids");
	cgdir("user.slice/session-1.scope", "");
	struct cg_layout l = fake_v2("user.slice/session-1.scope");
	unsetenv("XDG_RUNTIME_DIR");
	CHECK(cg_place(cg, &l, "b3", 78, &req) == 0);
	CHECK(cg->nh == 0 && cg->place == CG_PLACE_NONE);
	CHECK(cg->why == CG_WHY_NO_MANAGER);
	free_box(cg);
	cg = fake_box(4321);
	req.no_scope = 1;
	CHECK(cg_place(cg, &l, "b3", 78, &req) == 0);
	CHECK(cg->nh == 0 && cg->why == CG_WHY_NO_SCOPE);
	free_box(cg);
	drop_tree();
}

TEST(cgroup_v2_alone_in_own_cgroup_moves_into_kern_sup)
{
	struct cg_limits req = {0};
	struct cg_box *cg = fake_box(geteuid());
	char rel[64], want[512];
	new_tree();
	cgdir("mine", "memory pids");
	snprintf(rel, sizeof rel, "%d\n", (int)getpid());
	put("mine/cgroup.procs", rel);
	snprintf(rel, sizeof rel, "mine/kern-sup-%d", (int)getpid());
	cgdir(rel, "");
	struct cg_layout l = fake_v2("mine");
	CHECK(cg_place(cg, &l, "b4", getpid(), &req) == 0);
	CHECK(cg->place == CG_PLACE_V2_SELF && cg->nh == 1);
	snprintf(want, sizeof want, "%s/%s", tree, rel);
	CHECK_STR(cg->sup, want);
	/* kern-wait later finds it from inside kern-sup. */
	struct cg_layout later = fake_v2(rel);
	struct cg_box *found = fake_box(geteuid());
	CHECK(cg_find(found, &later, "b4", getpid()) == 0 && found->place == CG_PLACE_V2_SELF);
	CHECK_STR(found->sup, want);
	free_box(found);
	free_box(cg);
	drop_tree();
}

TEST(cgroup_v2_verify_reads_back_the_box_and_its_ancestors)
{
	struct cg_box *cg = fake_box(0);
	new_tree();
	cgdir("p", "memory pids cpu");
	cgdir("p/box", "");
	put("p/memory.max", "67108864\n");
	put("p/box/memory.max", "max\n");
	put("p/box/pids.max", "32\n");
	put("p/box/cpu.max", "50000 100000\n");
	cg->version = 2;
	cg->nh = 1;
	snprintf(cg->h[0].mount, sizeof cg->h[0].mount, "%s", tree);
	snprintf(cg->h[0].dir, sizeof cg->h[0].dir, "%s/p/box", tree);
	cg->h[0].ctls = CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS) | CG_BIT(CG_CPU);
	CHECK(cg_hier_open(&cg->h[0]) == 0);
	cg->mem_given = 1;
	cg->memory = 128 << 20;
	cg->pids = 32;
	cg->cpu_quota = 50000;
	/* The parent's 64 MiB holds a request of 128 MiB; pids and cpu are
	 * the box's own. */
	CHECK(cg_v2_verify(cg) == (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS) | CG_BIT(CG_CPU)));
	cg->memory = 32 << 20;
	cg->pids = 16;
	cg->cpu_quota = 40000;
	CHECK(cg_v2_verify(cg) == 0);
	put("p/memory.max", "max\n");
	cg->mem_given = 0;
	CHECK(!(cg_v2_verify(cg) & CG_BIT(CG_MEMORY)));
	put("p/box/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\noom_group_kill 1\n");
	uint64_t n = 0;
	CHECK(cg_oom_count(cg, &n) == 0 && n == 2);
	free_box(cg);
	drop_tree();
}

TEST(cgroup_sweep_removes_only_dead_empty_boxes)
{
	char p[512];
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	new_tree();
	snprintf(p, sizeof p, "kern-box-a-b-%d", (int)dead);
	dir(p);
	snprintf(p, sizeof p, "kern-sup-%d", (int)dead);
	dir(p);
	snprintf(p, sizeof p, "kern-box-live-%d", (int)getppid());
	dir(p);
	snprintf(p, sizeof p, "kern-box-full-%d", (int)dead);
	dir(p);
	snprintf(p, sizeof p, "kern-box-full-%d/box", (int)dead);
	dir(p);
	/* A cgroup with tasks refuses rmdir; a regular file does it here. */
	snprintf(p, sizeof p, "kern-box-full-%d/box/tasks", (int)dead);
	put(p, "1\n");
	/* A v1 box with its empty workload child goes, child first. */
	snprintf(p, sizeof p, "kern-box-v1-%d", (int)dead);
	dir(p);
	snprintf(p, sizeof p, "kern-box-v1-%d/box", (int)dead);
	dir(p);
	snprintf(p, sizeof p, "other-%d", (int)dead);
	dir(p);
	dir("kern-box-");
	dir("kern-box-99999999999");
	CHECK(cg_sweep_dir(tree, 128) == 3);
	snprintf(p, sizeof p, "%s/kern-box-v1-%d", tree, (int)dead);
	CHECK(access(p, F_OK) < 0);
	snprintf(p, sizeof p, "%s/kern-box-live-%d", tree, (int)getppid());
	CHECK(access(p, F_OK) == 0);
	snprintf(p, sizeof p, "%s/kern-box-full-%d", tree, (int)dead);
	CHECK(access(p, F_OK) == 0);
	snprintf(p, sizeof p, "%s/other-%d", tree, (int)dead);
	CHECK(access(p, F_OK) == 0);
	drop_tree();
}

TEST(cgroup_keyed_files)
{
	uint64_t v;
	int fd;
	new_tree();
	put("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
	put("pids.max", "max\n");
	put("memory.limit_in_bytes", "9223372036854771712\n");
	fd = open(tree, O_PATH | O_DIRECTORY);
	CHECK(cg_read_key(fd, "memory.oom_control", "oom_kill", &v) == 0 && v == 5);
	CHECK(cg_read_key(fd, "memory.oom_control", "oom_kill_disable", &v) == 0 && v == 0);
	CHECK(cg_read_key(fd, "memory.oom_control", "oom", &v) < 0);
	CHECK(cg_read_u64(fd, "pids.max", &v) == 0 && v == CG_UNLIMITED);
	CHECK(cg_read_u64(fd, "memory.limit_in_bytes", &v) == 0 && v == CG_UNLIMITED);
	CHECK(cg_word_in("cpu io memory", "memory") && !cg_word_in("cpuset", "cpu"));
	/* A write and its read-back through one descriptor; a refused open
	 * leaves the buffer alone. */
	char back[64] = "untouched";
	put("pids.max", "");
	CHECK(cg_write_read(fd, "pids.max", "50", back, sizeof back) == 0 && strcmp(back, "50") == 0);
	CHECK(cg_parse_u64(back, &v) == 0 && v == 50);
	strcpy(back, "untouched");
	CHECK(cg_write_read(fd, "no-such-file", "1", back, sizeof back) < 0 && errno == ENOENT);
	CHECK(strcmp(back, "untouched") == 0);
	char text[] = "oom_kill_disable 1\nunder_oom 0\n";
	CHECK(cg_parse_key(text, "oom_kill_disable", &v) == 0 && v == 1);
	close(fd);
	drop_tree();
}
