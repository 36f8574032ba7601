/* kern-oci's state directory: ROOT/ID/ per container (--root), holding
 * state.json (written to a temporary file, synced, renamed: a crash
 * leaves the old state or the new one, never half of either), the start
 * gate (a FIFO PID 1 waits on before it runs the workload) and a lock
 * that serializes the verbs of one container. The status is not stored:
 * it is read off the supervisor (alive with its recorded start time or
 * not) and whether start was called, so a killed supervisor is
 * "stopped" at once. */
#ifndef KERN_OCIRUNTIME_STATE_H
#define KERN_OCIRUNTIME_STATE_H

#include <limits.h>
#include <sys/types.h>

struct oci_state {
	char id[65];
	char bundle[PATH_MAX];
	pid_t pid;			/* the supervisor; 0 while creating */
	unsigned long long pid_start;	/* its start time (/proc/PID/stat field 22) */
	pid_t creator;			/* kern-oci create, while pid is 0 */
	unsigned long long creator_start;
	long long created;		/* unix seconds */
	int started;			/* start (or run) opened the gate */
	char *annotations;		/* JSON object text, malloc'd */
};

#define OCI_STATE_FILE "state.json"
#define OCI_GATE_FILE "start"
#define OCI_SECCOMP_FILE "seccomp.bpf"	/* the config's compiled linux.seccomp */

/* The default --root: /run/kern-oci for root, $XDG_RUNTIME_DIR/kern-oci
 * (or /tmp/kern-oci-UID) otherwise. */
void oci_default_root(char *out, size_t len);
/* ROOT/ID into out, after checking id (a kern box NAME). -1 with why. */
int oci_state_dir(const char *root, const char *id, char *out, size_t len, char *why, size_t wl);
int oci_state_write(const char *dir, const struct oci_state *s);
/* 0, or -1 with errno (ENOENT: no such container). */
int oci_state_read(const char *dir, struct oci_state *s);
void oci_state_free(struct oci_state *s);
/* "creating", "created", "running" or "stopped". */
const char *oci_state_status(const struct oci_state *s);
/* An exclusive flock on ROOT/ID (held until the fd is closed), or -1. */
int oci_state_lock(const char *dir);
/* Remove ROOT/ID and what it holds. */
int oci_state_remove(const char *dir);

#endif
