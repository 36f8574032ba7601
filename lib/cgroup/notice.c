#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/xdg.h"
#include "cgroup/notice.h"

void cg_refuse_uncapped(void)
{
	setup_failed("requested resource caps could not be enforced here and --require-limits is set; refusing to start");
	hint("run where kern can write a cgroup with the memory and pids controllers (as root, or in a "
	     "cgroup delegated to this user: `kern doctor` shows how), or pass --allow-uncapped "
	     "instead of --require-limits to run without caps");
}

/* "128 MiB", "1.5 GiB", "1000 bytes" */
static void human_size(char *out, size_t len, uint64_t b)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	int u = -1;
	uint64_t whole = b;
	while (u < 3 && whole >= 1024 && whole % 1024 == 0) {
		whole /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%" PRIu64 " bytes", b);
	else
		snprintf(out, len, "%" PRIu64 " %s", whole, unit[u]);
}

static void cpus_text(char *out, size_t len, uint64_t micro)
{
	uint64_t frac = micro % 1000000;
	int digits = 6;
	if (!frac) {
		snprintf(out, len, "%" PRIu64 " CPU", micro / 1000000);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(out, len, "%" PRIu64 ".%0*" PRIu64 " CPU", micro / 1000000, digits, frac);
}

/* Once per host (isolation.md §7.7 notices): a marker created O_EXCL under
 * the data dir. When the marker cannot be made, say it again rather than
 * never. */
static int first_time_on_host(void)
{
	char dir[4096], path[4200];
	int fd;
	if (kern_dir(KDIR_DATA, dir, sizeof dir, 1) < 0)
		return 1;
	snprintf(path, sizeof path, "%s/no-memory-controller.noticed", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno != EEXIST;
}

static const char *why_nowhere(enum cg_why why, char *buf, size_t len)
{
	unsigned uid = (unsigned)geteuid();
	switch (why) {
	case CG_WHY_NO_SCOPE:
		snprintf(buf, len, "KERN_NO_SCOPE is set and no writable cgroup is delegated to uid %u", uid);
		break;
	case CG_WHY_NO_MANAGER:
		snprintf(buf, len,
			 "no systemd user manager is reachable and no writable cgroup is delegated to uid %u", uid);
		break;
	default:
		if (uid == 0)
			snprintf(buf, len, "kern could not create a cgroup with those controllers here");
		else
			snprintf(buf, len, "no writable cgroup with those controllers is delegated to uid %u", uid);
		break;
	}
	return buf;
}

static void knob_notice(const struct cg_box *cg, enum cg_ctl c, const char *flag, const char *value)
{
	char why[PATH_MAX + 256];
	const struct cg_hier *h = NULL;
	for (int i = 0; i < cg->nh; i++)
		if (cg->h[i].ctls & CG_BIT(c))
			h = &cg->h[i];
	if (!(cg->present & CG_BIT(c)))
		snprintf(why, sizeof why, "this host has no %s cgroup controller", cg_ctl_name(c));
	else if (!h)
		snprintf(why, sizeof why, "the %s controller is not delegated to %s", cg_ctl_name(c),
			 cg->nh ? cg->h[0].parent : "any cgroup kern can write");
	else if ((cg->failed & CG_BIT(c)) && cg->failure[0] && (c == CG_MEMORY || c == CG_PIDS))
		snprintf(why, sizeof why, "%s", cg->failure);
	else
		snprintf(why, sizeof why, "it does not read back in force in %s", h->dir);
	warning("%s not enforced: %s; the box can exceed %s", flag, why, value);
}

void cg_notices(const struct cg_box *cg, const struct cg_limits *req)
{
	char v[64], buf[256];
	unsigned covered = 0;
	if (!(cg->present & CG_BIT(CG_MEMORY))) {
		if (req->memory_given || first_time_on_host())
			warning("resource caps are not enforced on this host: it has no cgroup memory "
				"controller, so box RAM is uncapped (the 512 MiB default included); isolation "
				"is otherwise intact. Enable the controller with the kernel parameter "
				"cgroup_enable=memory (and swapaccount=1) and reboot");
		covered |= CG_BIT(CG_MEMORY);
	} else if (cg->nh == 0) {
		warning("memory and pids caps are NOT enforced for this box (the 512 MiB and 512-task "
			"defaults included): there is no OOM or fork-bomb backstop, because %s. Pass "
			"--require-limits to refuse to run uncapped, or --allow-uncapped to silence this "
			"(`kern doctor` shows how to delegate a cgroup)",
			why_nowhere(cg->why, buf, sizeof buf));
		covered |= CG_BIT(CG_MEMORY) | CG_BIT(CG_PIDS);
	}
	if (req->memory_given && !(covered & CG_BIT(CG_MEMORY)) && !(cg->enforced & CG_BIT(CG_MEMORY))) {
		human_size(v, sizeof v, cg->memory);
		knob_notice(cg, CG_MEMORY, "--memory", v);
	}
	if (req->pids_given && !(covered & CG_BIT(CG_PIDS)) && !(cg->enforced & CG_BIT(CG_PIDS))) {
		snprintf(v, sizeof v, "%" PRIu64 " tasks", cg->pids);
		knob_notice(cg, CG_PIDS, "--pids-limit", v);
	}
	if (req->cpu_micro && !(cg->enforced & CG_BIT(CG_CPU))) {
		cpus_text(v, sizeof v, req->cpu_micro);
		knob_notice(cg, CG_CPU, "--cpus", v);
	}
	if (req->cpuset && !(cg->enforced & CG_BIT(CG_CPUSET))) {
		snprintf(v, sizeof v, "cpus %.40s", req->cpuset);
		knob_notice(cg, CG_CPUSET, "--cpuset", v);
	}
}
