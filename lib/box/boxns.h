/* A box's namespaces as descriptors (isolation.md §10).
 *
 * kern's init is non-dumpable, so the workload cannot reach into it: not
 * its memory (/proc/1/mem), not its descriptors (/proc/1/fd, pidfd_getfd).
 * That also closes /proc/<pid1>/ns to every process without CAP_SYS_PTRACE
 * over the host, which a rootless `kern exec` lacks. So PID 1 sends its
 * own namespace descriptors to the supervisor before the workload starts;
 * the supervisor keeps them for the box's life and records their numbers,
 * and `kern exec` reopens them through /proc/<supervisor>/fd. */
#ifndef KERN_BOXNS_H
#define KERN_BOXNS_H

#define BOX_NS_COUNT 7

struct box_ns {
	const char *name;	/* as in /proc/PID/ns */
	int type;		/* CLONE_NEW* */
};

/* In the order `kern exec` joins them: user, cgroup, ipc, uts, net, mnt, pid. */
extern const struct box_ns box_ns[BOX_NS_COUNT];

/* The one-byte tag of the message that carries them. */
#define BOX_NS_TAG 'N'

/* PID 1: the tag with the BOX_NS_COUNT descriptors of /proc/self/ns on
 * sock; sends nothing if one cannot be opened. Returns 0, or -1 with errno
 * and *opening the entry of /proc/self/ns that could not be opened ("" for
 * the directory), NULL when the send failed (send_fds_error()). */
int box_ns_send(int sock, const char **opening);

#endif
