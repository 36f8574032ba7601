/* kern-ns: the box's user, pid, uts, ipc and (unless --net host) network
 * namespaces and its id maps (isolation.md §2.4, §3). */
#ifndef KERN_NS_H
#define KERN_NS_H

#include "box/box.h"

/* Steps 9-11 in the calling process: it stays in the host pid namespace,
 * its next child becomes PID 1. egress_ctl >= 0 is handed to
 * egress_attach() once the network namespace exists. Returns 0, or -1
 * after printing `kern: sandbox setup failed:` (the caller ends with
 * EXIT_SETUP). *ranged tells whether a range map was written. */
int ns_enter(const struct ns_config *cfg, int egress_ctl, int *ranged);

/* The same namespaces for kern box, which clones PID 1 straight into
 * them (the supervisor stays in the host's): ns_flags() gives the clone
 * flags, and ns_map() writes the id maps of target's new user namespace
 * from the parent namespace, with the same choice, warnings and -1 as
 * ns_enter(). */
int ns_flags(const struct ns_config *cfg);
int ns_map(const struct ns_config *cfg, pid_t target, int *ranged);

/* 1 when a range map can be made for uid (an /etc/subuid and /etc/subgid
 * allocation, and newuidmap/newgidmap unless root; always for root's
 * shifted boxes, which have kern's default range). */
int ns_range_available(uid_t uid, int host_root);

/* Root's boxes (isolation.md §3). Box root as host uid 0 would carry the
 * box's capabilities to every root-owned host inode it reaches, so unless
 * --map-host-root a root caller's box is "shifted": box uid/gid 0 is the
 * first id of a subordinate range, `0 BASE 1` (single-id) or `0 BASE
 * COUNT` (range). The range is root's own /etc/subuid and /etc/subgid
 * rows (login name "root" or "0") when both exist, else kern's default:
 * 0x7F000000 (2^31 - 2^24) and 65536 ids, above what useradd (100000 to
 * 600100000) and systemd-nspawn (0x80000 to 0x6FFFFFFF) hand out, below
 * systemd's foreign range (0x7FFE0000) and below 2^31, where tools that
 * keep ids in a signed int go wrong. */
#define NS_ROOT_BASE 2130706432UL
#define NS_ROOT_COUNT 65536UL
int ns_shifted(const struct ns_config *cfg);
/* 1 when this process is in the initial user namespace (its uid_map is
 * the whole identity): its ids and capabilities are the host's. */
int ns_initial_userns(void);
/* The range of root's boxes now; a box reads it once into its
 * ns_config.ids, so that its maps, scratch and idmaps agree even if
 * /etc/subuid changes meanwhile. */
void ns_root_ids(struct ns_ids *ids);
/* A shifted box's standard descriptors that are anonymous pipes of host
 * root's (`cmd | kern box ...`, a client's pipes: mode 0600; also FIFOs
 * unlinked once opened, which no path reaches either) become box
 * root's (uid, gid), as a user's pipes are its boxes' root's, so that
 * /dev/stdout and /dev/stderr still open in the box. Files and named FIFOs
 * keep their owner (OT-4: box root cannot reopen a host file), and so does
 * a pipe of anyone but host root. */
void ns_give_stdio(unsigned long uid, unsigned long gid);
/* The host uid and gid of box root in the box whose PID 1 is pid (the
 * first line of its id maps): 0, or -1. */
int ns_box_root(pid_t pid, unsigned long *uid, unsigned long *gid);
/* In a shifted box's user namespace (PID 1, kern exec), from host root's
 * credentials, which its map does not name, to box root: no supplementary
 * groups, uid and gid 0, and the parent-death signal set again (the uid
 * change cleared it). Returns 0, or -1 with errno and *what naming the
 * call. */
int ns_become_root(const char **what);

/* The note after a failed box that wanted a range map but, silently, ran
 * with a single-id map. */
extern const char single_map_note[];

/* The chain's hand-over from kern-ns to kern-wait (same process, via exec):
 * which map was written. kern-wait reads and unsets it, so it never reaches
 * the box. Values: "range"; "single" (none asked for); "single-asked"
 * (--uid-range could not be had; kern-ns warned); "single-silent" (a range
 * was merely preferred and could not be had); "none" (--no-userns: no user
 * namespace). */
#define NS_MAP_ENV "KERN_NS_MAP"

/* kern-ns for a shifted box: no namespace made, the ones to make for
 * kern-wait as "<net host>,<range>,<range explicit>,<egress fd>" (0/1,
 * 0/1, 0/1, -1 or a descriptor). kern-wait reads and unsets it. */
#define NS_DEFER_ENV "KERN_NS_DEFER"

/* The caller's subordinate range from /etc/subuid or /etc/subgid (login
 * name row preferred over the numeric one, count > 1). 0 or -1. */
int subid_range(const char *file, uid_t id, const char *login, unsigned long *start,
		unsigned long *count);

#endif
