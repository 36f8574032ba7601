/* Capabilities and the user switch (isolation.md §5, §2.7 step 31). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/idmap.h"
#include "base/parse.h"
#include "lockdown/steps.h"

#define BIT(n) (1ULL << (n))

uint64_t caps_default(void)
{
	/* The 25 kept of isolation.md §5; every other capability, known or not yet
	 * invented, is dropped. */
	return BIT(CAP_CHOWN) | BIT(CAP_DAC_OVERRIDE) | BIT(CAP_DAC_READ_SEARCH) | BIT(CAP_FOWNER) |
	       BIT(CAP_FSETID) | BIT(CAP_KILL) | BIT(CAP_SETGID) | BIT(CAP_SETUID) | BIT(CAP_SETPCAP) |
	       BIT(CAP_LINUX_IMMUTABLE) | BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_NET_BROADCAST) |
	       BIT(CAP_NET_RAW) | BIT(CAP_IPC_LOCK) | BIT(CAP_IPC_OWNER) | BIT(CAP_SYS_CHROOT) |
	       BIT(CAP_SYS_NICE) | BIT(CAP_SYS_RESOURCE) | BIT(CAP_SYS_TTY_CONFIG) | BIT(CAP_MKNOD) |
	       BIT(CAP_LEASE) | BIT(CAP_AUDIT_WRITE) | BIT(CAP_SETFCAP) | BIT(CAP_BLOCK_SUSPEND) |
	       BIT(CAP_CHECKPOINT_RESTORE);
}

int caps_adjust(uint64_t *caps, char *const *drop, int ndrop, char *const *add, int nadd,
		const char **bad)
{
	/* Validate everything first so a bad entry leaves *caps alone. */
	uint64_t c = *caps;
	for (int i = 0; i < ndrop; i++) {
		int n;
		if (strcasecmp(drop[i], "all") == 0)
			c = 0;
		else if ((n = parse_cap(drop[i])) < 0) {
			*bad = drop[i];
			return -1;
		} else
			c &= ~BIT(n);
	}
	for (int i = 0; i < nadd; i++) {
		int n;
		if (strcasecmp(add[i], "all") == 0)
			c = ~0ULL;
		else if ((n = parse_cap(add[i])) < 0) {
			*bad = add[i];
			return -1;
		} else
			c |= BIT(n);
	}
	*caps = c;
	return 0;
}

/* The highest capability this kernel knows (cap_last_cap). */
static int last_cap(void)
{
	int n = (int)cap_max_bits() - 1;
	return n < 0 ? 0 : n > 63 ? 63 : n;
}

static int drop_bounding(uint64_t keep, char *why)
{
	/* Try every number until EINVAL marks the end of the kernel's range:
	 * a capability newer than libcap and the headers is still dropped. */
	int end = 64;
	for (int n = 0; n < end; n++) {
		if (keep & BIT(n))
			continue;
		/* prctl itself, not libcap, which may stop at the caps it knows. */
		if (prctl(PR_CAPBSET_DROP, n, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL) {
			end = n;
			break;
		}
		snprintf(why, WHY_MAX, "prctl(PR_CAPBSET_DROP, %d): %s", n, strerror(errno));
		return -1;
	}
	for (int n = 0; n < end; n++) {
		if (keep & BIT(n))
			continue;
		if (prctl(PR_CAPBSET_READ, n, 0, 0, 0) != 0) {
			const char *name = cap_name(n);
			snprintf(why, WHY_MAX, "capability %s (%d) is still in the bounding set after "
				 "PR_CAPBSET_DROP", name ? name : "?", n);
			return -1;
		}
	}
	return 0;
}

/* ld's supplementary groups that this user namespace maps, into out: a
 * group the box's gid map does not hold does not exist in the box
 * (setgroups(2) refuses a list with one, EINVAL), as an image's
 * /etc/group listing root in disk and wheel meets in a single-id box.
 * The map is read only from a real procfs (the box's own /proc, mounted
 * by kern); without one every group is kept, and setgroups(2) decides. */
static int mapped_groups(const struct lockdown *ld, gid_t *out)
{
	struct id_range map[IDMAP_MAX];
	int nmap = -1, n = 0;
	struct statfs fs;
	int fd = open("/proc/self/gid_map", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC)
		nmap = idmap_read_fd(fd, map, IDMAP_MAX);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < ld->ngroups; i++) {
		int keep = nmap <= 0;
		for (int m = 0; m < nmap && !keep; m++)
			keep = ld->groups[i] >= map[m].inside && ld->groups[i] - map[m].inside < map[m].count;
		if (keep)
			out[n++] = ld->groups[i];
	}
	return n;
}

static int switch_user(const struct lockdown *ld, char *why)
{
	gid_t groups[LOCKDOWN_MAX_GROUPS];
	int ngroups = mapped_groups(ld, groups);
	int nonzero_group = ld->gid != 0;
	for (int i = 0; i < ngroups; i++)
		nonzero_group |= groups[i] != 0;
	/* A single-id map denies setgroups (isolation.md §3): failing to set
	 * only group 0 changes nothing, so it is not an error. */
	if (setgroups((size_t)ngroups, groups) < 0 && nonzero_group) {
		snprintf(why, WHY_MAX, "setgroups(%d groups): %s", ngroups, strerror(errno));
		return -1;
	}
	if (setresgid(ld->gid, ld->gid, ld->gid) < 0 && ld->gid != 0) {
		snprintf(why, WHY_MAX, "setresgid(%u): %s", (unsigned)ld->gid, strerror(errno));
		return -1;
	}
	if (setresuid(ld->uid, ld->uid, ld->uid) < 0 && ld->uid != 0) {
		snprintf(why, WHY_MAX, "setresuid(%u): %s", (unsigned)ld->uid, strerror(errno));
		return -1;
	}
	return 0;
}

static int set_sets(uint64_t keep, char *why)
{
	cap_t c = cap_init();	/* all clear */
	cap_value_t v[64];
	int n = 0, rc;
	if (!c) {
		snprintf(why, WHY_MAX, "cap_init: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < 64; i++)
		if (keep & BIT(i))
			v[n++] = i;
	rc = n == 0 ? 0 : cap_set_flag(c, CAP_EFFECTIVE, n, v, CAP_SET) |
				   cap_set_flag(c, CAP_PERMITTED, n, v, CAP_SET) |
				   cap_set_flag(c, CAP_INHERITABLE, n, v, CAP_SET);
	if (rc == 0)
		rc = cap_set_proc(c);
	if (rc < 0)
		snprintf(why, WHY_MAX, "capset(%016llx): %s", (unsigned long long)keep, strerror(errno));
	cap_free(c);
	if (rc < 0)
		return -1;
	/* One call: libcap's cap_reset_ambient() first asks for each
	 * capability whether it is set (a system call apiece, on PID 1's
	 * path), and the kernel clears them all here anyway. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
		snprintf(why, WHY_MAX, "prctl(PR_CAP_AMBIENT_CLEAR_ALL): %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The permitted set now. A capability this process does not hold cannot
 * be kept: in a box (a fresh user namespace) that is never the case, but
 * kern may itself run where root lacks some, and then keeps fewer. */
static int permitted(uint64_t *out, char *why)
{
	cap_t c = cap_get_proc();
	*out = 0;
	if (!c) {
		snprintf(why, WHY_MAX, "capget: %s", strerror(errno));
		return -1;
	}
	for (int n = 0; n <= last_cap(); n++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(c, (cap_value_t)n, CAP_PERMITTED, &v) == 0 && v == CAP_SET)
			*out |= BIT(n);
	}
	cap_free(c);
	return 0;
}

int caps_apply(const struct lockdown *ld, char *why)
{
	int top = last_cap();
	uint64_t range = top >= 63 ? ~0ULL : BIT(top + 1) - 1, held;
	if (permitted(&held, why) < 0)
		return -1;
	/* A non-root user ends with every set empty, bounding included; so
	 * does every process of a box without a user namespace. */
	uint64_t keep = ld->host_ids || (ld->user_set && ld->uid != 0) ? 0 : ld->caps & range & held;
	/* Host ids: uid 0 gains no capability at exec and the kernel's
	 * uid-change fixup stays on, for good (needs CAP_SETPCAP, so first). */
	if (ld->host_ids &&
	    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
					 SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0) < 0) {
		snprintf(why, WHY_MAX, "prctl(PR_SET_SECUREBITS): %s", strerror(errno));
		return -1;
	}
	/* Bounding first: dropping needs CAP_SETPCAP, which the uid change
	 * and capset below may take away. */
	if (drop_bounding(keep, why) < 0)
		return -1;
	if (ld->user_set && switch_user(ld, why) < 0)
		return -1;
	return set_sets(keep, why);
}

int caps_verify_host(const struct lockdown *ld, char *why)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0) {
		snprintf(why, WHY_MAX, "getresuid: %s", strerror(errno));
		return -1;
	}
	if (!ld->host_root_ok && (ru == 0 || eu == 0 || su == 0 || rg == 0 || eg == 0 || sg == 0)) {
		snprintf(why, WHY_MAX, "host uid %u gid %u without a user namespace needs "
			 "--workload-is-host-root", (unsigned)eu, (unsigned)eg);
		return -1;
	}
	gid_t groups[LOCKDOWN_MAX_GROUPS + 1];
	int ng = getgroups(LOCKDOWN_MAX_GROUPS + 1, groups);
	for (int i = 0; !ld->host_root_ok && i < ng; i++)
		if (groups[i] == 0) {
			snprintf(why, WHY_MAX, "host group 0 without a user namespace needs "
				 "--workload-is-host-root");
			return -1;
		}
	if (ng < 0) {
		snprintf(why, WHY_MAX, "getgroups: %s", strerror(errno));
		return -1;
	}
	if (syscall(SYS_capget, &h, d) < 0) {
		snprintf(why, WHY_MAX, "capget: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable) {
			snprintf(why, WHY_MAX, "capabilities left without a user namespace, where they are "
				 "the host's (CapEff %08x%08x, CapPrm %08x%08x)",
				 d[1].effective, d[0].effective, d[1].permitted, d[0].permitted);
			return -1;
		}
	for (int n = 0; n < 64; n++) {
		int b = prctl(PR_CAPBSET_READ, n, 0, 0, 0);
		if (b < 0)
			break;	/* EINVAL: past the kernel's last capability */
		if (b == 1 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, n, 0, 0) == 1) {
			snprintf(why, WHY_MAX, "capability %d left in the bounding or ambient set without a "
				 "user namespace, where it is the host's", n);
			return -1;
		}
	}
	return 0;
}
