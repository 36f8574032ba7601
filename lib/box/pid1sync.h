/* The start handshake of a PID 1 cloned into new namespaces by a
 * supervisor that stays in the host's (kern box; kern-wait for a shifted
 * box, ns.h), over a SEQPACKET socket pair. After writing PID 1's id maps
 * (ns_map) the supervisor sends 'm'; PID 1 becomes box root if the box is
 * shifted and, with --egress-allow, sends the listener it made in the box's
 * network namespace, which the supervisor hands to the proxy; a shifted
 * PID 1 then asks for its idmapped mounts (idmount.h) until it closes its
 * end. For a PID 1 that does neither the supervisor sends 'a' instead of
 * 'm', PID 1 answers 'k', and the supervisor waits for that before its
 * own work after the clone: the kernel mostly starts a child on its
 * parent's CPU, where PID 1 would otherwise wait for that work to end
 * (up to 1 ms of a rootless start after idle, measured), and the
 * supervisor, woken by PID 1, is moved to an idle CPU. A v1 box
 * cgroup made after the clone (cg_pending()) goes on PID 1's report
 * socket instead, so it never meets those answers: the supervisor sends
 * 'c' with the descriptors to join it by, and PID 1, its root built,
 * joins before anything of the box runs. */
#ifndef KERN_PID1SYNC_H
#define KERN_PID1SYNC_H

#include <sys/types.h>

#include "box/box.h"

/* PID 1: returns once mapped (and, egress, once the listener is sent).
 * A supervisor that failed or died ends PID 1 (125); a failed uid change
 * is a setup failure. */
void pid1sync_wait(int sock, int shifted, int egress);

struct supervisor;

/* The supervisor, after ns_map(): 0 once PID 1 has what it needs (or
 * died in setup, which its status pipe reports); SUPERVISE_STOPPED when a
 * stop signal or the deadline came first (supervise_wait(s, ...) before
 * every read); else -1, printed. egress_ctl is the proxy's control
 * socket (-1: none or failed). */
int pid1sync_serve(int sock, pid_t pid1, const struct ns_config *nc, int egress, int egress_ctl,
		   struct supervisor *s);

struct cg_box;

/* The supervisor: the box cgroup's join descriptors to PID 1. 0 when sent
 * or when PID 1 is gone (its status says why), -1 printed. */
int pid1sync_send_cgroup(int sock, const struct cg_box *cg);
/* PID 1: into the box cgroup by what the supervisor sent; a supervisor
 * that failed ends PID 1 (125), a refused join is a setup failure. */
void pid1sync_join_cgroup(int sock);

#endif
