/* Why this process cannot create a user namespace (issue 19). Every box
 * used to blame the Debian sysctl, even for root in a chroot, where the
 * kernel refuses CLONE_NEWUSER to everyone and no sysctl helps. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/stat.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "box/userns_why.h"
#include "lockdown/lockdown.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* Where a path is: its inode, and the mount it is reached through. A
 * chroot into a bind mount of a file system's root (`mount --rbind /
 * DIR; chroot DIR`) has the very inode of the namespace's "/": only the
 * mount tells them apart, as it does for the kernel (current_chrooted()
 * compares mount and dentry). The mount id needs Linux 5.8 (statx
 * STATX_MNT_ID); before that, or where statx fails, the inode alone. */
struct place {
	dev_t dev;
	ino_t ino;
	unsigned long long mnt;
	int has_mnt;
};

static int place_of(const char *path, struct place *p)
{
	struct stat st;
	struct statx sx;
	if (stat(path, &st) < 0)
		return -1;
	memset(p, 0, sizeof *p);
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	if (syscall(SYS_statx, AT_FDCWD, path, 0, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID)) {
		p->mnt = sx.stx_mnt_id;
		p->has_mnt = 1;
	}
	return 0;
}

static int same_mntns_as_init(void)
{
	char a[64], b[64];
	ssize_t na = readlink("/proc/self/ns/mnt", a, sizeof a), nb = readlink("/proc/1/ns/mnt", b, sizeof b);
	return na > 0 && na == nb && memcmp(a, b, (size_t)na) == 0;
}

static int same_place(const struct place *a, const struct place *b)
{
	return a->dev == b->dev && a->ino == b->ino && (!a->has_mnt || !b->has_mnt || a->mnt == b->mnt);
}

/* "/" of this mount namespace, as the kernel's own chroot test
 * (current_chrooted()) takes it: setns(2) into a mount namespace moves the
 * caller's root to that namespace's root. It takes CAP_SYS_ADMIN and
 * CAP_SYS_CHROOT, so root only, and it is done in a child that stats "/"
 * and exits: kern itself never leaves its root. */
static int mntns_root(struct place *st)
{
	int p[2], ok;
	pid_t c;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	c = fork();
	if (c == 0) {
		struct place s;
		int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		close(p[0]);
		if (fd < 0 || setns(fd, CLONE_NEWNS) < 0 || place_of("/", &s) < 0)
			_exit(1);
		_exit(write(p[1], &s, sizeof s) == (ssize_t)sizeof s ? 0 : 1);
	}
	close(p[1]);
	ok = c > 0 && read_full(p[0], (char *)st, sizeof *st) == sizeof *st;
	close(p[0]);
	if (c > 0)
		(void)waitpid(c, NULL, 0);
	return ok ? 0 : -1;
}

/* 1 when no mount is at "/" in this process's mountinfo: the kernel leaves
 * out the mounts it cannot reach from the caller's root, so a root that is
 * a plain directory of a bigger file system lists none. -1 otherwise: a
 * chroot into a mount point lists one, so this cannot tell. */
static int no_mount_at_root(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	if (!f)
		return -1;
	while (!found && getline(&line, &cap, f) > 0) {
		char mp[8];
		/* id parent major:minor root MOUNT-POINT ... */
		if (sscanf(line, "%*s %*s %*s %*s %7s", mp) == 1 && strcmp(mp, "/") == 0)
			found = 1;
	}
	free(line);
	fclose(f);
	return found ? -1 : 1;
}

/* 1 chrooted, 0 not, -1 cannot tell; *how says how it was told. Root
 * asks the kernel's own question (the mount namespace's root); others
 * compare with init's root, which is unreadable to them when init runs
 * as another user (and on some hosts to root too), then mountinfo. */
static int chrooted(const char **how)
{
	struct place root, other;
	*how = "";
	if (place_of("/", &root) < 0)
		return -1;
	if (geteuid() == 0 && mntns_root(&other) == 0) {
		*how = "/ is not the root of its mount namespace";
		return !same_place(&root, &other);
	}
	if (place_of("/proc/1/root", &other) == 0) {
		*how = "/ is not /proc/1/root";
		/* Mount ids are per namespace: init's root is comparable by
		 * mount only from init's mount namespace. */
		if (!same_mntns_as_init())
			other.has_mnt = 0;
		return !same_place(&root, &other);
	}
	*how = "no mount is at /";
	return no_mount_at_root();
}

static long read_long(const char *path)
{
	char buf[32];
	char *end;
	long v;
	if (read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	errno = 0;
	v = strtol(buf, &end, 10);
	return errno || end == buf ? -1 : v;
}

void userns_why(int err, struct userns_why *w)
{
	struct statfs sf;
	struct userns_facts f = {.err = err, .chrooted = -1, .chroot_how = "", .max_userns = -1,
				 .userns_clone = -1, .aa_restrict = -1, .euid = geteuid()};
	f.proc = statfs("/proc", &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
	f.seccomp = seccomp_installed();
	if (f.proc) {
		f.chrooted = chrooted(&f.chroot_how);
		f.ns_user = access("/proc/self/ns/user", F_OK) == 0;
		f.max_userns = read_long("/proc/sys/user/max_user_namespaces");
		f.userns_clone = read_long("/proc/sys/kernel/unprivileged_userns_clone");
		f.aa_restrict = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	}
	userns_why_decide(&f, w);
}

static void set(struct userns_why *w, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set(struct userns_why *w, const char *fix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof w->why, fmt, ap);
	va_end(ap);
	snprintf(w->fix, sizeof w->fix, "%s", fix);
}

void userns_why_decide(const struct userns_facts *f, struct userns_why *w)
{
	int refused = f->err == EPERM || f->err == EACCES || f->err == EINVAL ||
		      f->err == ENOSPC || f->err == EUSERS;
	w->why[0] = w->fix[0] = 0;
	if (!refused)
		return;	/* out of memory, tasks, ...: the errno says it all */
	if (!f->proc) {
		set(w, "mount -t proc proc /proc", "/proc is not mounted here, so kern cannot tell why "
		    "(a chroot without /proc?)");
		return;
	}
	/* First, as nothing else matters on such a kernel. */
	if (!f->ns_user) {
		set(w, "a kernel built with CONFIG_USER_NS=y", "this kernel has no user namespaces "
		    "(built without CONFIG_USER_NS: no /proc/self/ns/user)");
		return;
	}
	if (f->chrooted == 1 && (f->err == EPERM || f->err == EACCES)) {
		set(w, "run kern outside the chroot, or enter the tree with pivot_root(2) in a new mount "
		    "namespace instead of chroot(2)", "kern runs in a chroot (%s), and the kernel "
		    "refuses new user namespaces to any chrooted process, root included", f->chroot_how);
		return;
	}
	if (f->max_userns == 0) {
		set(w, "sysctl -w user.max_user_namespaces=15000", "user namespaces are switched off on "
		    "this host (sysctl user.max_user_namespaces = 0)");
		return;
	}
	if (f->err == ENOSPC) {
		char limit[32] = "";
		if (f->max_userns > 0)
			snprintf(limit, sizeof limit, " = %ld", f->max_userns);
		set(w, "raise user.max_user_namespaces (sysctl -w user.max_user_namespaces=15000), or end "
		    "idle namespaces", "the user namespace limit is used up (sysctl "
		    "user.max_user_namespaces%s, or this user's share of it)", limit);
		return;
	}
	if (f->err == EUSERS) {
		set(w, "run kern from a less deeply nested user namespace", "kern already runs 32 user "
		    "namespaces deep, the kernel's limit");
		return;
	}
	if (f->euid != 0 && f->userns_clone == 0) {
		set(w, "as root: sysctl -w kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d to "
		    "keep it)", "unprivileged user namespaces are restricted on this host (sysctl "
		    "kernel.unprivileged_userns_clone = 0)");
		return;
	}
	if (f->euid != 0 && f->aa_restrict == 1) {
		set(w, "as root: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or load an "
		    "AppArmor profile for kern that allows `userns,`", "unprivileged user namespaces are "
		    "restricted on this host (sysctl kernel.apparmor_restrict_unprivileged_userns = 1, "
		    "Ubuntu's AppArmor policy)");
		return;
	}
	if (f->seccomp && f->err == EPERM) {
		set(w, "run kern where no seccomp filter denies unshare(CLONE_NEWUSER) (a container's "
		    "seccomp profile that allows it)", "kern runs under a seccomp filter, as in a "
		    "container, which may deny it");
		return;
	}
	set(w, "look for an LSM or container policy denying unshare(CLONE_NEWUSER) (dmesg), or run "
	    "kern where `unshare -U true` works", "no chroot, sysctl, AppArmor or seccomp restriction "
	    "found%s", f->chrooted == -1 ? " (kern could not tell whether it runs in a chroot)" : "");
}

void userns_report(const char *call, int err, int launcher_fd)
{
	struct userns_why w;
	char line[600];
	userns_why(err, &w);
	snprintf(line, sizeof line, "%s(CLONE_NEWUSER|CLONE_NEWPID|...): %s%s%s", call, strerror(err),
		 w.why[0] ? ": " : "", w.why);
	setup_failed("%s", line);
	if (w.fix[0])
		hint("%s", w.fix);
	status_setup_failed(launcher_fd, w.fix[0] ? w.fix : NULL, "%s", line);
}
