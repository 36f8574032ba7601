/* The box cgroup API (cgroup.h): create and verify, find again, enter and
 * leave, OOM, kill, remove. Placement is cgroup/place.c, the limit files
 * cgroup/v1.c and cgroup/v2.c, the notices cgroup/notice.c. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "base/clock.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/parse.h"
#include "base/path.h"
#include "base/premap.h"
#include "cgroup/box.h"
#include "cgroup/io.h"
#include "cgroup/notice.h"

_Static_assert(CG_HAS_MEMORY == CG_BIT(CG_MEMORY) && CG_HAS_PIDS == CG_BIT(CG_PIDS) &&
		       CG_HAS_CPU == CG_BIT(CG_CPU) && CG_HAS_CPUSET == CG_BIT(CG_CPUSET),
	       "cgroup/cgroup.h and cgroup/layout.h agree on controller bits");
_Static_assert(CG_JOIN_MAX >= CG_NCTL, "one join descriptor per hierarchy");

/* A cg_box is ~65 KiB, mostly PATH_MAX buffers of which a few bytes are
 * used, so calloc() would clear every page of it. Its own mapping is
 * zero already, and populated in the same call (MAP_POPULATE) where that
 * pays (premap.h): about half its pages are touched on the start path,
 * and a page populated with the mapping costs well under 1 µs where a
 * page fault costs 10-15 µs on such a VM (measured: 103 -> 51 µs for the
 * pages a v1 box uses). */
static struct cg_box *box_new(const struct cg_limits *req)
{
	struct cg_box *cg = mmap(NULL, sizeof *cg, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | (premap_pays() ? MAP_POPULATE : 0), -1, 0);
	if (cg == MAP_FAILED)
		return NULL;
	for (int i = 0; i < CG_NCTL; i++)
		cg->h[i].fd = cg->h[i].leaf_fd = -1;
	cg->oom_efd = -1;
	cg->uid = geteuid();
	if (!req)
		return cg;
	cg->memory = req->memory ? req->memory : CG_DEFAULT_MEMORY;
	cg->mem_given = req->memory_given;
	cg->pids = req->pids ? req->pids : CG_DEFAULT_PIDS;
	if (req->cpu_micro) {
		/* round(C x 100000) per 100000 µs, C clamped to the host's cpus;
		 * the kernel takes no quota under 1 ms. */
		uint64_t micro = req->cpu_micro;
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		if (ncpu > 0 && micro > (uint64_t)ncpu * 1000000)
			micro = (uint64_t)ncpu * 1000000;
		cg->cpu_quota = (micro + 5) / 10;
		if (cg->cpu_quota < 1000)
			cg->cpu_quota = 1000;
		cg->cpu_micro = micro;
	}
	if (req->cpuset)
		snprintf(cg->cpuset, sizeof cg->cpuset, "%s", req->cpuset);
	cg->cpu_shares = req->cpu_shares;
	return cg;
}

static void box_free(struct cg_box *cg)
{
	if (cg)
		munmap(cg, sizeof *cg);
}

static void close_fds(struct cg_box *cg)
{
	for (int i = 0; i < cg->nh; i++) {
		if (cg->h[i].fd >= 0)
			close(cg->h[i].fd);
		if (cg->h[i].leaf_fd >= 0)
			close(cg->h[i].leaf_fd);
		cg->h[i].fd = cg->h[i].leaf_fd = -1;
	}
	if (cg->oom_efd >= 0) {
		close(cg->oom_efd);
		cg->oom_efd = -1;
	}
}

/* Escape what would break a one-line record: %, space, control bytes. */
static void append_escaped(char *out, size_t len, const char *s)
{
	size_t o = strlen(out);
	for (; *s && o + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= ' ' || c == '%' || c == 0x7f)
			o += (size_t)snprintf(out + o, len - o, "%%%02X", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
}

static void build_record(struct cg_box *cg)
{
	cg->record[0] = 0;
	if (cg->nh == 0)
		return;
	snprintf(cg->record, sizeof cg->record, "v%d %d", cg->version, cg->byte1);
	for (int i = 0; i < cg->nh; i++) {
		strncat(cg->record, " ", sizeof cg->record - strlen(cg->record) - 1);
		append_escaped(cg->record, sizeof cg->record, cg->h[i].dir);
	}
}

static void compute_byte1(struct cg_box *cg)
{
	cg->byte1 = !cg->mem_given ? 0 : (cg->enforced & CG_BIT(CG_MEMORY)) ? 1 : 2;
}

void cg_kill_all(struct cg_box *cg)
{
	if (!cg)
		return;
	for (int i = 0; i < cg->nh; i++) {
		struct cg_hier *h = &cg->h[i];
		if (h->fd < 0)
			continue;
		if (cg->version == 2 && cg_write(h->fd, "cgroup.kill", "1") == 0)
			continue;
		/* v1 (or v2 before 5.14): a few passes over the box's tree
		 * catch tasks forked meanwhile; killing kern's init ends the pid
		 * namespace anyway. */
		for (int pass = 0; pass < 8 && cg_tree_kill(h->fd) > 0; pass++)
			;
	}
}

/* Remove one box dir once its tasks are gone, killing stragglers. */
static int remove_dir(struct cg_box *cg, struct cg_hier *h)
{
	long start = now_ms(), wait = 1;
	for (;;) {
		if (h->fd >= 0 && cg->version == 1)
			cg_tree_rmdir_below(h->fd);
		if (rmdir(h->dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY && errno != ENOTEMPTY)
			return -1;
		long t = now_ms() - start;
		if (t > 2000)
			return -1;
		if (t > 100)
			cg_kill_all(cg);
		sleep_ms(wait);
		if (wait < 20)
			wait *= 2;
	}
}

/* CG_PLACE_V2_SELF: hand the caller's own cgroup back as it was: no
 * controllers for children, the caller inside, kern-sup gone. */
static void restore_self(struct cg_box *cg)
{
	char parent[PATH_MAX], buf[512];
	int fd;
	if (!cg->sup[0])
		return;
	snprintf(parent, sizeof parent, "%s", cg->sup);
	*strrchr(parent, '/') = 0;
	if ((fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (cg_read(fd, "cgroup.subtree_control", buf, sizeof buf) >= 0) {
		static const char *const domain[] = {"memory", "pids", "cpu", "cpuset", "io"};
		for (size_t i = 0; i < sizeof domain / sizeof domain[0]; i++) {
			char tok[16];
			if (!cg_word_in(buf, domain[i]))
				continue;
			snprintf(tok, sizeof tok, "-%s", domain[i]);
			(void)cg_write(fd, "cgroup.subtree_control", tok);
		}
	}
	if (cg_write(fd, "cgroup.procs", "0") == 0)
		(void)rmdir(cg->sup);
	close(fd);
}

static void remove_all(struct cg_box *cg)
{
	for (int i = 0; i < cg->nh; i++)
		(void)remove_dir(cg, &cg->h[i]);
	restore_self(cg);
}

/* Sweep each parent this box used (isolation.md §2.2 step 7: up to 128 in all). */
void cg_sweep_parents(struct cg_box *cg)
{
	int max = 128;
	for (int i = 0; cg && i < cg->nh && max > 0; i++)
		max -= cg_sweep_dir(cg->h[i].parent, max);
}

/* Nothing of a failed placement is kept: cg stays an uncapped box the
 * caller frees (cg_create) or destroys (cg_create_later). */
static int place_failed(struct cg_box *cg)
{
	remove_all(cg);
	close_fds(cg);
	cg->nh = 0;
	return -1;
}

/* Step 7 on the layout found: place, write and read back the limits, the
 * v1 leaf, the notices, the sweep. 0, or -1 printed. */
static int create_in(struct cg_box *cg, struct cg_layout *l, const char *name, pid_t supervisor,
		     const struct cg_limits *req)
{
	if (cg_place(cg, l, name, supervisor, req) < 0)
		return place_failed(cg);
	if (cg->nh > 0) {
		if (cg->version == 2)
			cg_v2_apply(cg);
		else
			cg_v1_apply(cg);
		cg->enforced = cg->version == 2 ? cg_v2_verify(cg) : cg_v1_verify(cg);
		/* v1: the workload goes one level down, below the caps. Made
		 * after the limits: use_hierarchy only changes while childless. */
		for (int i = 0; cg->version == 1 && i < cg->nh; i++)
			if (cg_leaf_make(&cg->h[i]) < 0) {
				setup_failed_errno("cgroup: mkdir %s/%s", cg->h[i].dir, CG_LEAF);
				return place_failed(cg);
			}
	}
	unsigned basic = (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS)) & cg->present;
	int owned = cg->place == CG_PLACE_V2_ROOT || cg->place == CG_PLACE_V1_ROOT;
	if (owned && (cg->enforced & basic) != basic) {
		/* kern owns this hierarchy: a cap it cannot apply is a fault. */
		enum cg_ctl c = (cg->enforced & CG_BIT(CG_MEMORY) & basic) || !(basic & CG_BIT(CG_MEMORY))
					? CG_PIDS : CG_MEMORY;
		if (cg->failure[0])
			setup_failed("cgroup %s cap not applied: %s", cg_ctl_name(c), cg->failure);
		else
			setup_failed("cgroup %s cap does not read back in force in %s", cg_ctl_name(c),
				     cg_hier_of(cg, c) ? cg_hier_of(cg, c)->dir : "the box cgroup");
		return place_failed(cg);
	}
	if (!owned && cg->nh > 0 && !(cg->enforced & (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS)))) {
		/* Best effort that bound nothing: do not keep an empty shell. */
		(void)place_failed(cg);
		cg->place = CG_PLACE_NONE;
		cg->why = CG_WHY_NOT_WRITABLE;
	}
	compute_byte1(cg);
	if (req->require_limits &&
	    (cg->enforced & (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS))) !=
		    (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS))) {
		cg_refuse_uncapped();
		return place_failed(cg);
	}
	if (!req->allow_uncapped)
		cg_notices(cg, req);
	if (!req->sweep_later)
		cg_sweep_parents(cg);
	build_record(cg);
	return 0;
}

/* Step 7 from the start: the hierarchies found, then create_in(). The
 * layout is 48 KiB of which a few bytes a page are used, but every page
 * is written (each mount's three paths lie a page apart): static and
 * mapped in one call whatever a fault costs (13 faults a start here
 * otherwise), not on the stack, whose pages a late creation would copy
 * one fault at a time from PID 1's share of them. */
static int detect_and_create(struct cg_box *cg, const char *name, pid_t supervisor,
			     const struct cg_limits *req)
{
	static struct cg_layout l;
	premap_dense(&l, sizeof l);
	if (cg_detect(&l) < 0)
		l.version = l.nmounts = 0;
#ifdef KERN_TEST_BUILD
	/* Test builds only (bench/box-startup's uncapped side): behave as on a
	 * host without cgroups. Release builds have no such switch. */
	if (env_get("KERN_TEST_UNCAPPED"))
		l.version = l.nmounts = 0;
#endif
	return create_in(cg, &l, name, supervisor, req);
}

/* cgroup2 on top of /sys/fs/cgroup: cg_detect()'s test for v2, in one
 * call. */
static int v2_on_top(void)
{
	struct statfs sf;
	return statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

int cg_create(const char *name, pid_t supervisor, const struct cg_limits *req, struct cg_box **out)
{
	struct cg_box *cg = box_new(req);
	*out = NULL;
	if (!cg) {
		setup_failed("cgroup: out of memory");
		return -1;
	}
	if (!name_ok(name, BOX_NAME_MAX)) {
		setup_failed("cgroup: bad box name '%s'", name ? name : "");
		box_free(cg);
		return -1;
	}
	/* kern's own placement off v2 waits (v2 places PID 1 at its clone);
	 * even the hierarchies are found when it is made. PID 1 joins through
	 * the supervisor's descriptors, and v1 lets an opener other than root
	 * move a task only when the task's uid is the opener's: a rootless
	 * PID 1 is still the caller on the host when it joins (box root maps
	 * to the caller; --user is taken after the join). */
	if (req->later && !req->path && !v2_on_top()) {
		/* PID 1 is cloned without it (it never looks at a pending box):
		 * the supervisor fills it then without copy-on-write faults. */
		(void)madvise(cg, sizeof *cg, MADV_DONTFORK);
		cg->later.pending = 1;
		cg->later.name = name;
		cg->later.supervisor = supervisor;
		cg->later.req = req;
		*out = cg;
		return 0;
	}
	if (detect_and_create(cg, name, supervisor, req) < 0) {
		box_free(cg);
		return -1;
	}
	*out = cg;
	return 0;
}

int cg_pending(const struct cg_box *cg)
{
	return cg && cg->later.pending;
}

int cg_create_later(struct cg_box *cg)
{
	if (!cg_pending(cg))
		return 0;
	cg->later.pending = 0;
	return detect_and_create(cg, cg->later.name, cg->later.supervisor, cg->later.req);
}

int cg_join_open(const struct cg_box *cg, int *fds, int max, char *failed, size_t len)
{
	const char *file = cg && cg->version == 1 ? "tasks" : "cgroup.procs";
	int n = 0;
	for (; cg && n < cg->nh; n++) {
		const struct cg_hier *h = &cg->h[n];
		int leaf = cg->version == 1 && h->leaf_fd >= 0;
		errno = E2BIG;
		if (n == max || (fds[n] = openat(leaf ? h->leaf_fd : h->fd, file,
						 O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			snprintf(failed, len, "%s/%s%s", h->dir, leaf ? CG_LEAF "/" : "", file);
			goto fail;
		}
	}
	return n;
fail:;
	int e = errno;
	while (n > 0)
		close(fds[--n]);
	errno = e;
	return -1;
}

int cg_join_by(const int *fds, int n)
{
	/* "0": the writer itself. On v1 (tasks) the one migration the kernel
	 * makes without its global write lock (that lock waits for an RCU
	 * grace period, 5-20 ms on an idle host); the caller is single
	 * threaded, so this is the whole process. */
	for (int i = 0; i < n; i++)
		if (write(fds[i], "0", 1) != 1)
			return -1;
	return 0;
}

int cg_open(const char *name, pid_t supervisor, const struct cg_limits *req, struct cg_box **out)
{
	struct cg_layout l;
	struct cg_box *cg = box_new(req);
	*out = NULL;
	if (!cg) {
		setup_failed("cgroup: out of memory");
		return -1;
	}
	if (name_ok(name, BOX_NAME_MAX) && cg_detect(&l) == 0 && l.version &&
	    (req && req->path ? cg_find_path(cg, &l, req->path) : cg_find(cg, &l, name, supervisor)) == 0 &&
	    cg->nh > 0)
		cg->enforced = cg->version == 2 ? cg_v2_verify(cg) : cg_v1_verify(cg);
	else
		cg->nh = 0;
	for (int i = 0; cg->version == 1 && i < cg->nh; i++)
		if (cg_leaf_open(&cg->h[i]) < 0) {
			setup_failed_errno("cgroup: %s/%s", cg->h[i].dir, CG_LEAF);
			close_fds(cg);
			box_free(cg);
			return -1;
		}
	compute_byte1(cg);
	if (req && req->require_limits &&
	    (cg->enforced & (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS))) !=
		    (CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS))) {
		cg_refuse_uncapped();
		close_fds(cg);
		box_free(cg);
		return -1;
	}
	if (cg_oom_count(cg, &cg->oom_base) < 0)
		cg->oom_base = 0;
	build_record(cg);
	*out = cg;
	return 0;
}

static int hexdigit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int unescape_into(char *out, size_t len, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			int hi = i + 2 < n ? hexdigit(s[i + 1]) : -1, lo = i + 2 < n ? hexdigit(s[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (hi | lo) == 0)
				return -1;
			c = (char)(hi * 16 + lo);
			i += 2;
		}
		if (o + 1 >= len)
			return -1;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

int cg_open_record(const char *record, struct cg_box **out)
{
	struct cg_layout l;
	struct cg_box *cg = box_new(NULL);
	int version, byte1;
	*out = NULL;
	if (!cg)
		return -1;
	if (!record || !record[0]) {
		*out = cg;
		return 0;
	}
	/* "v<1|2> <byte1> <dir>..." */
	if (record[0] != 'v' || (record[1] != '1' && record[1] != '2') || record[2] != ' ' ||
	    record[3] < '0' || record[3] > '2' || (record[4] != ' ' && record[4] != 0))
		goto bad;
	version = record[1] - '0';
	byte1 = record[3] - '0';
	if (cg_detect(&l) < 0 || l.version != version)
		goto bad;
	cg->version = version;
	cg->byte1 = byte1;
	for (const char *p = record + 4; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, " ");
		struct cg_hier *h = &cg->h[cg->nh];
		struct cg_mount *m = NULL;
		const char *base;
		if (cg->nh >= CG_NCTL || unescape_into(h->dir, sizeof h->dir, p, n) < 0 ||
		    !path_is_clean_abs(h->dir))
			goto bad;
		p += n;
		for (int i = 0; i < l.nmounts; i++)
			if (path_is_under(h->dir, l.mounts[i].dir) && strcmp(h->dir, l.mounts[i].dir) != 0)
				m = &l.mounts[i];
		base = strrchr(h->dir, '/');
		/* A box's cgroup is kern-box-*, or, for root only, the
		 * path kern-oci was given (linux.cgroupsPath): root's records
		 * are root's own files. */
		if (!m || (strncmp(base + 1, "kern-box-", 9) != 0 && geteuid() != 0))
			goto bad;
		snprintf(h->mount, sizeof h->mount, "%s", m->dir);
		memcpy(h->parent, h->dir, (size_t)(base - h->dir));
		h->parent[base - h->dir] = 0;
		h->ctls = m->ctls;
		if ((h->fd = open_nofollow_abs(h->dir)) < 0)
			goto bad;
		/* open_nofollow_abs gives O_PATH of anything: a directory only. */
		int dfd = openat(h->fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(h->fd);
		h->fd = dfd;
		if (h->fd < 0 || (version == 1 && cg_leaf_open(h) < 0))
			goto bad;
		cg->nh++;
	}
	if (cg_oom_count(cg, &cg->oom_base) < 0)
		cg->oom_base = 0;
	build_record(cg);
	*out = cg;
	return 0;
bad:
	close_fds(cg);
	box_free(cg);
	errno = EINVAL;
	return -1;
}

const char *cg_record(const struct cg_box *cg)
{
	return cg ? cg->record : "";
}

int cg_byte1(const struct cg_box *cg)
{
	return cg ? cg->byte1 : 0;
}

int cg_is_v2(const struct cg_box *cg)
{
	return cg && cg->nh > 0 && cg->version == 2;
}

unsigned cg_enforced(const struct cg_box *cg)
{
	return cg ? cg->enforced : 0;
}

int cg_join(struct cg_box *cg)
{
	int fds[CG_JOIN_MAX];
	char failed[PATH_MAX + 32];
	int n = cg_join_open(cg, fds, CG_JOIN_MAX, failed, sizeof failed);
	if (n < 0)
		return -1;
	int r = cg_join_by(fds, n), e = errno;
	while (n > 0)
		close(fds[--n]);
	errno = e;
	return r;
}

int cg_clone_fd(const struct cg_box *cg)
{
	return cg && cg->version == 2 && cg->nh > 0 ? cg->h[0].fd : -1;
}

int cg_oom_fd(struct cg_box *cg)
{
	if (!cg || cg->version != 1 || !cg_hier_of(cg, CG_MEMORY))
		return -1;
	if (cg->oom_efd < 0)
		cg->oom_efd = cg_v1_oom_register(cg);
	return cg->oom_efd;
}

int cg_oom_fired(struct cg_box *cg)
{
	uint64_t n, ev;
	if (!cg)
		return 0;
	if (cg->oom_efd >= 0 && read(cg->oom_efd, &ev, sizeof ev) == (ssize_t)sizeof ev)
		cg->oom_event = 1;
	/* The event is signalled as the OOM starts; the kill that bumps
	 * oom_kill follows within the same charge attempt. */
	for (int i = 0; i < 20; i++) {
		if (cg_oom_count(cg, &n) < 0)
			return cg->oom_event;
		if (n > cg->oom_base)
			return 1;
		sleep_ms(2);
	}
	return 0;
}

int cg_oom_evidence(struct cg_box *cg)
{
	uint64_t n;
	if (!cg || cg->nh == 0)
		return 0;
	if (cg_oom_count(cg, &n) == 0)
		return n > cg->oom_base;
	/* Kernels before 4.13 have no oom_kill counter: the event is all. */
	return cg->oom_event;
}

void cg_destroy(struct cg_box *cg)
{
	if (!cg)
		return;
	remove_all(cg);
	close_fds(cg);
	box_free(cg);
}

void cg_teardown(struct cg_box *cg)
{
	int empty = 1;
	if (!cg)
		return;
	for (int i = 0; i < cg->nh && empty; i++) {
		struct cg_hier *h = &cg->h[i];
		int leaf_gone = cg->version != 1 || h->fd < 0 ||
				unlinkat(h->fd, CG_LEAF, AT_REMOVEDIR) == 0 || errno == ENOENT;
		empty = leaf_gone && (rmdir(h->dir) == 0 || errno == ENOENT);
	}
	if (!empty) {
		cg_kill_all(cg);
		cg_destroy(cg);
		return;
	}
	restore_self(cg);
	close_fds(cg);
	box_free(cg);
}

void cg_close(struct cg_box *cg)
{
	if (!cg)
		return;
	close_fds(cg);
	box_free(cg);
}

const char *cg_describe(const struct cg_box *cg)
{
	static char buf[PATH_MAX + 64];
	static const char *const kind[] = {
		[CG_PLACE_NONE] = "none",
		[CG_PLACE_V2_ROOT] = "v2 root",
		[CG_PLACE_V2_USER] = "v2 user manager's delegated subtree",
		[CG_PLACE_V2_SELF] = "v2 own delegated cgroup",
		[CG_PLACE_V2_DELEGATED] = "v2 delegated cgroup",
		[CG_PLACE_V1_ROOT] = "v1 root",
		[CG_PLACE_V1_DELEGATED] = "v1 delegated cgroup",
	};
	if (!cg || cg->nh == 0)
		return "none";
	snprintf(buf, sizeof buf, "%s: %s", kind[cg->place], cg->h[0].parent);
	for (int i = 1; i < cg->nh; i++) {
		size_t o = strlen(buf);
		snprintf(buf + o, sizeof buf - o, ", %s", cg->h[i].parent);
	}
	return buf;
}

int cg_sweep_orphans(int max)
{
	struct cg_layout l;
	char p[PATH_MAX];
	int done = 0;
	uid_t uid = geteuid();
	if (cg_detect(&l) < 0 || !l.version)
		return 0;
	for (int i = 0; i < l.nmounts && done < max; i++) {
		struct cg_mount *m = &l.mounts[i];
		if (l.version == 2) {
			snprintf(p, sizeof p, "%s/kern.slice", m->dir);
			done += cg_sweep_dir(p, max - done);
			snprintf(p, sizeof p, "%s/user.slice/user-%u.slice/user@%u.service/kern.slice",
				 m->dir, (unsigned)uid, (unsigned)uid);
			done += cg_sweep_dir(p, max - done);
		} else {
			snprintf(p, sizeof p, "%s/kern", m->dir);
			done += cg_sweep_dir(p, max - done);
			snprintf(p, sizeof p, "%s/kern/user-%u", m->dir, (unsigned)uid);
			done += cg_sweep_dir(p, max - done);
		}
		/* The current cgroup and its ancestors inside the mount. */
		snprintf(p, sizeof p, "%s", m->self);
		while (p[0] && strlen(p) >= strlen(m->dir) && done < max) {
			done += cg_sweep_dir(p, max - done);
			char *s = strrchr(p, '/');
			if (!s || strlen(p) == strlen(m->dir))
				break;
			*s = 0;
		}
	}
	return done;
}
