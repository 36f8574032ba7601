/* Why this process cannot create a user namespace: the one cause that
 * applies here, found in a fixed order, each with its own fix (issue 19).
 * Shared by the box start (lib/box/ns.c: the clone or unshare that failed)
 * and kern doctor's user-namespace row. */
#ifndef KERN_USERNS_WHY_H
#define KERN_USERNS_WHY_H

#include <sys/types.h>

/* What userns_why_decide() rules on, as userns_why() observed it. */
struct userns_facts {
	int err;		/* errno of the failed clone/unshare */
	int proc;		/* /proc is a procfs mount */
	int chrooted;		/* 1 yes, 0 no, -1 cannot tell */
	const char *chroot_how;	/* how chrooted was told, for the message */
	int ns_user;		/* /proc/self/ns/user exists (CONFIG_USER_NS) */
	long max_userns;	/* user.max_user_namespaces, -1 unreadable */
	long userns_clone;	/* kernel.unprivileged_userns_clone, -1 absent */
	long aa_restrict;	/* kernel.apparmor_restrict_unprivileged_userns, -1 absent */
	int seccomp;		/* a seccomp filter is installed */
	uid_t euid;
};

/* The cause as one clause for `kern: sandbox setup failed: <call>:
 * <strerror>: <why>` and doctor's row, and its fix as one line for
 * `hint:` and doctor's `fix:`. */
struct userns_why {
	char why[256];
	char fix[256];
};

/* Looks at this host and process (the checks are cheap and read-only; as
 * root, telling a chroot may fork one short-lived child) and fills w for
 * the failing errno err. */
void userns_why(int err, struct userns_why *w);

/* The decision alone, from facts: chrooted, no CONFIG_USER_NS,
 * user.max_user_namespaces = 0, the Debian/Ubuntu sysctl (non-root),
 * Ubuntu's AppArmor restriction (non-root), a seccomp filter, else the
 * errno's own meaning. Pure, for the unit tests. */
void userns_why_decide(const struct userns_facts *f, struct userns_why *w);

/* The setup-failure line and its hint for a failed call ("clone" or
 * "unshare") of the box's namespaces, errno err, on stderr and, when
 * launcher_fd >= 0 (a detached box's launcher, which prints them), there
 * too as "125 LINE\nHINT". */
void userns_report(const char *call, int err, int launcher_fd);

#endif
