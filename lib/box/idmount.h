/* Host files in a shifted box (isolation.md §3: a root caller's box whose
 * root is a subordinate id, ns.h). Its PID 1 can neither make idmapped
 * mounts (MOUNT_ATTR_IDMAP needs CAP_SYS_ADMIN over the filesystem's user
 * namespace: the host's) nor, often, walk to the host paths it binds (root's
 * 0700 runtime, cache and home directories). So the supervisor, still host
 * root in the host's namespaces, makes them on PID 1's request over their
 * start socket: PID 1 names a host path; the supervisor walks it without
 * following a symlink, clones its mount tree detached with the bind's
 * flags and an idmap, and sends the tree back; PID 1 attaches it in its own
 * mount namespace (move_mount takes a detached tree from any namespace).
 *
 * The idmaps: on-disk uid/gid 0 is box root, so root's workspace files a
 * box writes stay root-owned on the host and root-owned system files still
 * look root-owned in the box. An image or --rootfs lower (read-only under
 * the overlay) is idmapped through PID 1's own user namespace, which shows
 * every id of the box's range as itself. Binds, --bind-rootfs and the host
 * image's system directories go through `0 BASE 1` plus the identity over
 * the rest of the range (PID 1's own namespace where that is all it maps):
 * any other host id is nobody's there, so box uid 1000 never acts as host
 * uid 1000, and files of box users land on the same subordinate ids as
 * elsewhere.
 *
 * The same socket carries PID 1's requests for disk vdisks (vdisk.h),
 * which only host root can make.
 *
 * The supervisor serves only until PID 1 closes its end, which it does
 * when its root is built, before anything of the workload exists. */
#ifndef KERN_IDMOUNT_H
#define KERN_IDMOUNT_H

#include <stdint.h>
#include <sys/types.h>

#include "box/bindmount.h"
#include "box/box.h"

/* ---- PID 1's side ---- */

/* The source of a bind of host path src: without a start socket (idm_fd
 * < 0) the no-follow descriptor of src itself (*tree = 0); in a shifted
 * box the detached, idmapped tree the supervisor made with o's flags
 * (*tree = 1). lower asks for an overlay lower (always read-only, PID 1's
 * own idmap). Returns the descriptor, or -1 with errno and *what naming the
 * failing step. */
int idm_source(int idm_fd, const char *src, int lower, const struct bind_opts *o, int *tree,
	       const char **what);
/* Ask for src's tree now, to be taken later by idm_source() with the same
 * src, lower and ro: the supervisor makes it while PID 1 goes on. Best
 * effort (nothing is asked without a start socket, or when too many are
 * pending); idm_source() asks itself for what was not sent ahead. */
void idm_prefetch(int idm_fd, const char *src, int lower, int ro);
/* Before PID 1 closes its start socket: read the answers still due and
 * close the trees it did not take. */
void idm_forget(int idm_fd);
/* Bind what idm_source() returned onto dstfd (dstpath names it for the old
 * mount API): bind_fd() for a plain source, bind_attach() for a tree, whose
 * flags are set already. Closes nothing. */
int idm_attach(int fd, int tree, int dstfd, const char *dstpath, const struct bind_opts *o,
	       const char **what);

/* A disk vdisk of size bytes, made by the supervisor (vdisk.h): the
 * detached mount, or -1 with errno and *what. */
int idm_vdisk(int idm_fd, uint64_t size, const char **what);

/* ---- the supervisor's side ---- */

struct supervisor;

/* Serve PID 1's requests on sock until it closes its end (or dies): 0.
 * pid1 names PID 1's user namespace; cfg says whether the box maps a
 * range. A tree that cannot be made is answered with the error, which
 * PID 1 reports; -1 when the socket itself fails, or with ECANCELED when
 * supervise_wait(s, sock) gave up (a stop signal or the deadline while
 * PID 1 builds its root). Once PID 1 has its answers and no request waits,
 * s->idle runs (once; IDM_IDLE_FAILED when it failed, printed). */
#define IDM_IDLE_FAILED (-2)
int idm_serve(int sock, pid_t pid1, const struct ns_config *cfg, struct supervisor *s);

/* kern doctor: make (and drop) an idmapped mount of the filesystem at
 * path, as a range box's bind would be. 0, or -1 with errno and *what. */
int idm_probe(const char *path, const char **what);

#endif
