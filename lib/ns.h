/* kern-ns: the box's user, pid, uts, ipc and (unless --net host) network
 * namespaces and its id maps (isolation.md §2.4, §3). */
#ifndef KERN_NS_H
#define KERN_NS_H

#include "box.h"

/* Steps 9-11 in the calling process: it stays in the host pid namespace,
 * its next child becomes PID 1. egress_ctl >= 0 is handed to
 * egress_attach() once the network namespace exists. Returns 0, or 125
 * after printing `kern: sandbox setup failed:`. *ranged tells whether a
 * range map was written. */
int ns_enter(const struct ns_config *cfg, int egress_ctl, int *ranged);

/* The same namespaces for kern box, which clones PID 1 straight into
 * them (the supervisor stays in the host's): ns_flags() gives the clone
 * flags, and ns_map() writes the id maps of target's new user namespace
 * from the parent namespace, with the same choice and warnings as
 * ns_enter(). */
int ns_flags(const struct ns_config *cfg);
int ns_map(const struct ns_config *cfg, pid_t target, int *ranged);
/* Prints why the clone into those namespaces failed (errno err). */
void ns_clone_failed(int err);

/* 1 when a range map can be made for uid (an /etc/subuid and /etc/subgid
 * allocation, and newuidmap/newgidmap unless root). */
int ns_range_available(uid_t uid);

/* The note after a failed box that wanted a range map but, silently, ran
 * with a single-id map. */
extern const char single_map_note[];

/* The chain's hand-over from kern-ns to kern-wait (same process, via exec):
 * which map was written. kern-wait reads and unsets it, so it never reaches
 * the box. Values: "range"; "single" (none asked for); "single-asked"
 * (--uid-range could not be had; kern-ns warned); "single-silent" (a range
 * was merely preferred and could not be had). */
#define NS_MAP_ENV "KERN_NS_MAP"

/* The caller's subordinate range from /etc/subuid or /etc/subgid (login
 * name row preferred over the numeric one, count > 1). 0 or -1. */
int subid_range(const char *file, uid_t id, const char *login, unsigned long *start,
		unsigned long *count);

#endif
