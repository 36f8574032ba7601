/* Boxes without a user namespace (issue 19): where the kernel refuses
 * CLONE_NEWUSER (no CONFIG_USER_NS, a chroot, user.max_user_namespaces =
 * 0, a container's seccomp profile) a root caller still gets every other
 * namespace, the same root, /dev, /proc masks, seccomp program and cgroup
 * caps, as OpenWrt's ujail boxes services. Box root would be host root
 * there, so the workload runs as an unprivileged host uid (65534 unless
 * --user says otherwise) with no capabilities at all and no_new_privs;
 * uid 0 takes --workload-is-host-root. */
#ifndef KERN_NOUSERNS_H
#define KERN_NOUSERNS_H

#include <sys/types.h>

/* kern box --userns=auto|yes|no. */
enum userns_mode { USERNS_AUTO, USERNS_YES, USERNS_NO };
/* "auto" | "yes" | "no" -> mode, else -1. */
int userns_mode_parse(const char *s);

/* The workload's ids when neither --user nor a non-root image USER names
 * one: nobody and nogroup. */
#define NOUSERNS_UID 65534
#define NOUSERNS_GID 65534

/* 0 when this process can create a user namespace, else the errno of the
 * refused clone(CLONE_NEWUSER) of a child that exits at once (it shares
 * this process's memory until then: no page tables are copied). */
int userns_probe(void);

/* 1 when err, from clone(CLONE_NEWUSER), is the kernel or a policy
 * refusing user namespaces (a reason to box without one under
 * --userns=auto); ENOMEM, EAGAIN and the like are not. */
int userns_refusal(int err);

/* The one `kern: note:` of --userns=auto falling back, naming the cause
 * (userns_why.h) of err and the workload's ids. */
void nouserns_note(int err, uid_t uid, gid_t gid);

/* kern-fs step 19 got EINVAL from making "/" private: "/" is not a mount
 * point, as in a chroot into a plain directory, where pivot_root(2)
 * fails the same way. Makes "/" the root of a mount of its own: a
 * recursive clone of the tree at "/" (exactly what this process already
 * sees, nothing above it), moved onto "/" and entered with chroot(".").
 * Only in a mount namespace of this process's own. 0, or -1 with errno
 * and *what naming the call. */
int nouserns_root_mount(const char **what);

#endif
