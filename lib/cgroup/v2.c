/* cgroup v2: memory.max with swap 0 and the kernel's group OOM kill,
 * pids.max, cpu.max, cpuset.cpus; written and read back (isolation.md
 * §7.3). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "cgroup/box.h"
#include "cgroup/io.h"

static void put(struct cg_box *cg, enum cg_ctl c, struct cg_hier *h, const char *file,
		const char *value)
{
	if (cg_write(h->fd, file, value) < 0)
		cg_note_failure(cg, c, h, file, value);
}

void cg_v2_apply(struct cg_box *cg)
{
	struct cg_hier *h = &cg->h[0];
	char buf[64];
	if (cg->nh != 1)
		return;
	if (h->ctls & CG_BIT(CG_MEMORY)) {
		snprintf(buf, sizeof buf, "%" PRIu64, cg->memory);
		put(cg, CG_MEMORY, h, "memory.max", buf);
		/* Absent without swap accounting: nothing to swap to then. */
		if (cg_has(h->fd, "memory.swap.max"))
			put(cg, CG_MEMORY, h, "memory.swap.max", "0");
		put(cg, CG_MEMORY, h, "memory.oom.group", "1");
	}
	if (h->ctls & CG_BIT(CG_PIDS)) {
		snprintf(buf, sizeof buf, "%" PRIu64, cg->pids);
		put(cg, CG_PIDS, h, "pids.max", buf);
	}
	if ((h->ctls & CG_BIT(CG_CPU)) && cg->cpu_quota) {
		snprintf(buf, sizeof buf, "%" PRIu64 " %d", cg->cpu_quota, CG_PERIOD_US);
		put(cg, CG_CPU, h, "cpu.max", buf);
	}
	if ((h->ctls & CG_BIT(CG_CPU)) && cg->cpu_shares) {
		/* v1's shares 2..262144 onto v2's weight 1..10000, linearly
		 * (the conversion runc and crun use). */
		snprintf(buf, sizeof buf, "%" PRIu64, 1 + ((cg->cpu_shares - 2) * 9999) / 262142);
		put(cg, CG_CPU, h, "cpu.weight", buf);
	}
	if ((h->ctls & CG_BIT(CG_CPUSET)) && cg->cpuset[0])
		put(cg, CG_CPUSET, h, "cpuset.cpus", cg->cpuset);
}

/* "quota period" or "max period" */
static int cpu_max(int dirfd, uint64_t *q, uint64_t *p)
{
	char buf[64], *sp;
	unsigned long long pp;
	if (cg_read(dirfd, "cpu.max", buf, sizeof buf) <= 0 || !(sp = strchr(buf, ' ')))
		return -1;
	*sp = 0;
	if (parse_u64(sp + 1, &pp) < 0 || pp == 0)
		return -1;
	*p = pp;
	if (strcmp(buf, "max") == 0) {
		*q = CG_UNLIMITED;
		return 0;
	}
	unsigned long long qq;
	if (parse_u64(buf, &qq) < 0)
		return -1;
	*q = qq;
	return 0;
}

/* cpu.max of a cgroup at or below the request (cg_any_up()). */
static int cpu_caps(int dirfd, const void *arg)
{
	uint64_t quota = *(const uint64_t *)arg, q, p;
	return cpu_max(dirfd, &q, &p) == 0 && q != CG_UNLIMITED && q * CG_PERIOD_US <= quota * p;
}

unsigned cg_v2_verify(struct cg_box *cg)
{
	struct cg_hier *h = cg->nh == 1 ? &cg->h[0] : NULL;
	unsigned ok = 0;
	uint64_t v;
	char buf[256];
	if (!h)
		return 0;
	/* An ancestor's cap counts too (a MemoryMax= on a delegated slice),
	 * so this does not depend on the box having the controller. */
	uint64_t want = cg->mem_given ? cg->memory : CG_UNLIMITED - 1;
	if (cg_capped_up(h, "memory.max", want))
		ok |= CG_BIT(CG_MEMORY);
	if ((h->ctls & CG_BIT(CG_PIDS)) && cg_read_u64(h->fd, "pids.max", &v) == 0 &&
	    cg_caps(v, cg->pids))
		ok |= CG_BIT(CG_PIDS);
	if (cg->cpu_quota && cg_any_up(h, cpu_caps, &cg->cpu_quota))
		ok |= CG_BIT(CG_CPU);
	if (cg->cpuset[0] && (h->ctls & CG_BIT(CG_CPUSET)) &&
	    cg_read(h->fd, "cpuset.cpus", buf, sizeof buf) > 0 && cg_cpulist_equal(buf, cg->cpuset))
		ok |= CG_BIT(CG_CPUSET);
	return ok;
}
