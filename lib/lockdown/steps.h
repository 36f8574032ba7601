/* The steps lockdown_apply() (lib/lockdown/lockdown.c) runs in order, one
 * file each: ulimit.c, caps.c, seccomp.c, beside it. Private to
 * lib/lockdown/. Each returns 0, or -1 with a one-line reason in
 * why[WHY_MAX]. */
#ifndef KERN_LOCKDOWN_STEPS_H
#define KERN_LOCKDOWN_STEPS_H

#include "lockdown/lockdown.h"

#define WHY_MAX 256

int ulimits_apply(const struct ulimit_spec *u, int n, char *why);
/* Bounding set, uid/gid/groups, effective/permitted/inheritable, ambient. */
int caps_apply(const struct lockdown *ld, char *why);
/* ld->host_ids: no capability in any set (bounding and ambient too), and
 * no uid or gid 0 unless ld->host_root_ok, read back from the kernel. */
int caps_verify_host(const struct lockdown *ld, char *why);
/* Loads the prebuilt program of this mode for the native architecture
 * with one seccomp(2) call (prctl(2) where seccomp(2) is missing). */
int lockdown_seccomp_load(int mode, char *why);
/* The stacked no-setuid/setgid-files program (lockdown.h restrict_sxid). */
int lockdown_seccomp_load_sxid(char *why);
/* The stacked program of lockdown.h extra_bpf. */
int lockdown_seccomp_load_extra(const struct sock_filter *p, unsigned n, char *why);

#endif
