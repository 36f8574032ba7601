/* kern-fs: PID 1 builds the box root: overlay (or bind, or the host
 * image), /dev, binds, tmpfs, a fresh /proc, pivot_root, the /proc masks,
 * then execs the rest of argv from a descriptor to kern opened before the
 * pivot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/selfexec.h"
#include "box/box.h"
#include "box/chain.h"
#include "box/mountspec.h"
#include "box/report.h"
#include "box/rootfs.h"
#include "steps/steps.h"

static const char usage[] =
	"usage: kern-fs --root overlay|bind|host [--lower DIR] --hostname NAME [options] -- NEXT...\n"
	"\n"
	"Run as PID 1 of a box (a child of kern-wait, in the namespaces kern-ns made):\n"
	"unshare the mount namespace, mount the root in the scratch directory, build\n"
	"/dev, apply the binds (by depth) and tmpfs mounts, mount /proc, pivot_root,\n"
	"mask /proc, then exec NEXT (a kern-* step is run from kern's own image).\n"
	"\n"
	"  --root overlay|bind|host  overlay on --lower; --lower itself; the host image\n"
	"  --lower DIR               the image rootfs or --rootfs directory\n"
	"  --scratch DIR             upper/ work/ merged/ (default: from kern-wait)\n"
	"  --disk SIZE               the writable layer: a tmpfs over the scratch directory\n"
	"                            of this size (default 256m; 0 = no size= of its own)\n"
	"  --hostname NAME           the box hostname\n"
	"  --ro                      read-only root and /dev\n"
	"  --rootless                overlay with userxattr (an unprivileged caller)\n"
	"  --net-host                keep the host network (no lo setup; host resolv.conf)\n"
	"  --cgroup2                 mount the read-only cgroup2 view at /sys/fs/cgroup\n"
	"  --tty                     a devpts of the box's own at /dev/pts, /dev/ptmx\n"
	"                            and /dev/tty (for kern-seccomp --tty)\n"
	"  --workdir DIR             created if missing; the workload's cwd\n"
	"  --mount type=bind,src=S,dst=D[,ro]   a bind (repeatable)\n"
	"  --tmpfs PATH[:SIZE]       a tmpfs (repeatable)\n"
	"  --vdisk PATH:SIZE         an ext4 of SIZE (1m..16t) at PATH, on a loop device\n"
	"                            over an unnamed sparse file (repeatable, at most 8;\n"
	"                            needs host root: kern-wait of a root caller makes it)\n"
	"  --device PATH             a character device bound at the same path\n"
	"\n"
	"In a box started by root (without --map-host-root) kern-wait hands it the\n"
	"host paths as idmapped mounts over a socket named in KERN_PID1, and scratch\n"
	"is its working directory.\n"
	"\n"
	"Any failure exits 125 with `kern: sandbox setup failed: <why>`.\n";

static int fs_main(int argc, char **argv)
{
	static struct bind_spec binds[FS_STEP_MAX_ITEMS];
	static struct tmpfs_spec tmpfs[FS_STEP_MAX_ITEMS];
	static struct dev_spec devices[FS_STEP_MAX_ITEMS];
	static struct tmpfs_spec vdisks[FS_STEP_MAX_ITEMS];
	struct fs_config c = fs_step_defaults;
	struct chain_fds ch;
	int next;

	c.binds = binds;
	c.tmpfs = tmpfs;
	c.devices = devices;
	c.vdisks = vdisks;
	next = step_args(&fs_step_flags, argc, argv, &c) + 1;
	if (next >= argc)
		step_die(&fs_step_flags, "missing `-- NEXT...`");
	if (c.root != ROOT_HOST && !c.lower)
		step_die(&fs_step_flags, "--root %s needs --lower", c.root == ROOT_BIND ? "bind" : "overlay");
	chain_read(&ch);
	if (!c.scratch)
		c.scratch = ch.scratch[0] ? ch.scratch : NULL;
	if (!c.scratch)
		step_die(&fs_step_flags, "no scratch directory (run under kern-wait, or give --scratch)");
	diag_status_fd = ch.status_fd;
	/* A shifted box (kern-wait made PID 1 box root and its cwd scratch):
	 * host paths come from the supervisor (idmount.h). */
	c.shifted = ch.idm_fd >= 0;
	c.idm_fd = ch.idm_fd;
	/* The next step is exec'd from this descriptor, opened while kern's own
	 * image is still reachable by path. */
	if (self_exe_fd() < 0)
		step_die_setup_errno(&fs_step_flags, "open /proc/self/exe");
	fs_build(&c);
	if (c.shifted) {
		/* The supervisor makes no more mounts for this box. */
		close(c.idm_fd);
		chain_export(ch.status_fd, ch.report_fd, -1, ch.has_caller_mask ? &ch.caller_mask : NULL,
			     ch.scratch);
	}
	exec_next(argv + next);
	step_die_setup_errno(&fs_step_flags, "exec %s", argv[next]);
}

APPLET(fs, "build the box root: overlay, /dev, binds, tmpfs, pivot_root, /proc", usage, fs_main);
