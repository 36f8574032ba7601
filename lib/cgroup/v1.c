/* cgroup v1 (hybrid hosts): memory with swap 0, pids, cpu bandwidth and
 * cpuset written per hierarchy and read back (isolation.md §7.3; memory,
 * pids and oom_control through the descriptor of the write), and the
 * OOM event kern needs to emulate v2's group kill (§7.5). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cgroup/box.h"
#include "cgroup/io.h"

static void put(struct cg_box *cg, enum cg_ctl c, struct cg_hier *h, const char *file,
		const char *value)
{
	if (cg_write(h->fd, file, value) < 0)
		cg_note_failure(cg, c, h, file, value);
}

static void put_u64(struct cg_box *cg, enum cg_ctl c, struct cg_hier *h, const char *file,
		    uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	put(cg, c, h, file, buf);
}

/* put_u64, and what the file then holds into *held (*have = 1). */
static void put_u64_back(struct cg_box *cg, enum cg_ctl c, struct cg_hier *h, const char *file,
			 uint64_t v, int *have, uint64_t *held)
{
	char val[24], back[64];
	snprintf(val, sizeof val, "%" PRIu64, v);
	if (cg_write_read(h->fd, file, val, back, sizeof back) < 0)
		cg_note_failure(cg, c, h, file, val);
	else if (cg_parse_u64(back, held) == 0)
		*have = 1;
}

/* The kernel must kill, not pause, at the limit. A new memory cgroup
 * inherits its parent's oom_kill_disable: read it, and write 0 only when
 * it is set (one open where the parent is as it should be). */
static void oom_kill_enable(struct cg_box *cg, struct cg_hier *h)
{
	char text[512];
	uint64_t off;
	if (cg_read_key(h->fd, "memory.oom_control", "oom_kill_disable", &off) == 0 && off == 0) {
		cg->back.oom = 1;
		cg->back.oom_disabled = 0;
		return;
	}
	if (cg_write_read(h->fd, "memory.oom_control", "0", text, sizeof text) < 0)
		cg_note_failure(cg, CG_MEMORY, h, "memory.oom_control", "0");
	else if (cg_parse_key(text, "oom_kill_disable", &off) == 0) {
		cg->back.oom = 1;
		cg->back.oom_disabled = off;
	}
}

/* 5.11 made every memory cgroup hierarchical: use_hierarchy is 1 and
 * refuses anything else. */
static int memcg_always_hierarchical(void)
{
	struct utsname u;
	char *dot;
	if (uname(&u) < 0)
		return 0;
	unsigned long major = strtoul(u.release, &dot, 10);
	if (dot == u.release || *dot != '.')
		return 0;
	unsigned long minor = strtoul(dot + 1, NULL, 10);
	return major > 5 || (major == 5 && minor >= 11);
}

void cg_v1_apply(struct cg_box *cg)
{
	for (int i = 0; i < cg->nh; i++) {
		struct cg_hier *h = &cg->h[i];
		if (h->ctls & CG_BIT(CG_MEMORY)) {
			/* Only the box's own: its parent has a child (this box)
			 * by now, so a pre-5.11 kernel refuses the write there
			 * (EBUSY). */
			if (!memcg_always_hierarchical())
				(void)cg_write(h->fd, "memory.use_hierarchy", "1");
			put_u64_back(cg, CG_MEMORY, h, "memory.limit_in_bytes", cg->memory, &cg->back.memory,
				     &cg->back.memory_v);
			/* memory+swap = memory: no swap at all. The file exists
			 * only with swap accounting. */
			if (cg_has(h->fd, "memory.memsw.limit_in_bytes"))
				put_u64(cg, CG_MEMORY, h, "memory.memsw.limit_in_bytes", cg->memory);
			(void)cg_write(h->fd, "memory.swappiness", "0");
			oom_kill_enable(cg, h);
		}
		if (h->ctls & CG_BIT(CG_PIDS))
			put_u64_back(cg, CG_PIDS, h, "pids.max", cg->pids, &cg->back.pids, &cg->back.pids_v);
		if ((h->ctls & CG_BIT(CG_CPU)) && cg->cpu_quota) {
			put_u64(cg, CG_CPU, h, "cpu.cfs_period_us", CG_PERIOD_US);
			put_u64(cg, CG_CPU, h, "cpu.cfs_quota_us", cg->cpu_quota);
		}
		if ((h->ctls & CG_BIT(CG_CPU)) && cg->cpu_shares)
			put_u64(cg, CG_CPU, h, "cpu.shares", cg->cpu_shares);
		if ((h->ctls & CG_BIT(CG_CPUSET)) && cg->cpuset[0])
			put(cg, CG_CPUSET, h, "cpuset.cpus", cg->cpuset);
	}
}

/* cpu: quota/period of a cgroup at or below the request (cg_any_up()). */
static int cpu_caps(int dirfd, const void *arg)
{
	uint64_t quota = *(const uint64_t *)arg, q, p;
	return cg_read_u64(dirfd, "cpu.cfs_quota_us", &q) == 0 &&
	       cg_read_u64(dirfd, "cpu.cfs_period_us", &p) == 0 && q != CG_UNLIMITED && p > 0 &&
	       q * CG_PERIOD_US <= quota * p;
}

/* What file holds: read back by its write already (have), or read now. */
static int held(int have, uint64_t back, int dirfd, const char *file, uint64_t *v)
{
	if (have) {
		*v = back;
		return 0;
	}
	return cg_read_u64(dirfd, file, v);
}

unsigned cg_v1_verify(struct cg_box *cg)
{
	unsigned ok = 0;
	struct cg_hier *h;
	uint64_t v;
	char buf[256];

	if ((h = cg_hier_of(cg, CG_MEMORY))) {
		uint64_t want = cg->mem_given ? cg->memory : CG_UNLIMITED - 1;
		uint64_t disabled = 1;
		int own = held(cg->back.memory, cg->back.memory_v, h->fd, "memory.limit_in_bytes", &v) == 0 &&
			  cg_caps(v, want);
		/* An ancestor's cap counts only through the hierarchy, and
		 * only when the box's own does not bind. */
		int hier = !own && cg_read_u64(h->fd, "memory.use_hierarchy", &v) == 0 && v == 1;
		if (cg->back.oom)
			disabled = cg->back.oom_disabled;
		else
			(void)cg_read_key(h->fd, "memory.oom_control", "oom_kill_disable", &disabled);
		if (disabled == 0 &&
		    (own || (hier && cg_capped_up(h, "memory.limit_in_bytes", want))))
			ok |= CG_BIT(CG_MEMORY);
	}
	if ((h = cg_hier_of(cg, CG_PIDS)) && held(cg->back.pids, cg->back.pids_v, h->fd, "pids.max", &v) == 0 &&
	    cg_caps(v, cg->pids))
		ok |= CG_BIT(CG_PIDS);
	if (cg->cpu_quota && (h = cg_hier_of(cg, CG_CPU)) && cg_any_up(h, cpu_caps, &cg->cpu_quota))
		ok |= CG_BIT(CG_CPU);
	if (cg->cpuset[0] && (h = cg_hier_of(cg, CG_CPUSET)) &&
	    cg_read(h->fd, "cpuset.cpus", buf, sizeof buf) > 0 && cg_cpulist_equal(buf, cg->cpuset))
		ok |= CG_BIT(CG_CPUSET);
	return ok;
}

int cg_v1_oom_register(struct cg_box *cg)
{
	struct cg_hier *h = cg_hier_of(cg, CG_MEMORY);
	char line[32];
	int efd, ofd, r;
	if (!h)
		return -1;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -1;
	ofd = openat(h->fd, "memory.oom_control", O_RDONLY | O_CLOEXEC);
	if (ofd < 0) {
		close(efd);
		return -1;
	}
	snprintf(line, sizeof line, "%d %d", efd, ofd);
	r = cg_write(h->fd, "cgroup.event_control", line);
	int saved = errno;
	/* The registration holds what it needs; only the eventfd stays. */
	close(ofd);
	if (r < 0) {
		close(efd);
		errno = saved;
		return -1;
	}
	return efd;
}

int cg_oom_count(struct cg_box *cg, uint64_t *n)
{
	struct cg_hier *h = cg_hier_of(cg, CG_MEMORY);
	if (!h) {
		errno = ENOENT;
		return -1;
	}
	if (cg->version == 2)
		return cg_read_key(h->fd, "memory.events", "oom_kill", n);
	/* v1 counts a kill only in the victim's own cgroup: add up the tree. */
	return cg_tree_sum_key(h->fd, "memory.oom_control", "oom_kill", n);
}
