/* kern oci, in two files: oci.c reads the flags and runs a container's
 * life (create, start, state, kill, delete, run, features); oci_exec.c
 * what runs in a running container (exec, ps). This header is what they
 * share. */
#ifndef KERN_OCI_CMD_H
#define KERN_OCI_CMD_H

#include <limits.h>
#include <sys/types.h>

#include "ociruntime/state.h"

/* The global flags. */
struct oci_globals {
	char root[PATH_MAX];	/* --root */
	const char *log;	/* --log */
	int log_json;		/* --log-format json */
};
extern struct oci_globals oci_g;

/* One error line on stderr and in --log, then exit(code). */
void oci_fail(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* A JSON file the engine hands over (config.json, process.json): a regular
 * file of at most 4 MiB, read whole; otherwise oci_fail() naming verb. */
char *oci_read_json(const char *verb, const char *path, size_t *len);
/* The value of flag f (or alias) at argv[*i], "--f V" or "--f=V"; NULL
 * when argv[*i] is another flag. */
const char *oci_flag_value(int argc, char **argv, int *i, const char *f, const char *alias);
/* ROOT/ID into dir, the id checked; a container's state into s. */
void oci_dir(const char *id, char *dir, size_t len);
void oci_load(const char *id, const char *dir, struct oci_state *s);
/* The pid into path, whole or not at all. 0 or -1 with errno. */
int oci_pid_file(const char *path, pid_t pid);
/* Send sig once to every process in pid1's pid namespace but pid1 itself,
 * each held as a pidfd before it is looked at. */
void oci_signal_all(pid_t pid1, int sig);
/* The processes of that namespace, pid1 first, up to max; their number. */
int oci_box_pids(pid_t pid1, pid_t *out, int max);

struct oci_config;
/* oci_sysctl.c: write c's linux.sysctl into the namespaces of the box id
 * (supervisor sup) while its PID 1 waits at the start gate. 0, or the
 * exit status with the error line written (stderr and --log). */
int oci_write_sysctls(const char *id, pid_t sup, const struct oci_config *c, int own_net);

/* oci_oom.c: between create and start the supervisor sup sits in the
 * memory cgroup of its box at cgroupsPath (when it has one), where the
 * engine's OOM watch looks (the memory cgroup of the --pid-file pid);
 * leave moves it back, before the gate opens or the box is killed.
 * join changes nothing when it cannot be done; leave is 0 when there is
 * nothing to undo, -1 with why. dir is the container's state directory. */
void oci_oom_watch_join(const char *dir, const char *cgroups_path, pid_t sup);
int oci_oom_watch_leave(const char *dir, pid_t sup, char *why, size_t wl);

/* oci_exec.c: the verbs; argv is what follows the verb. */
int oci_exec(int argc, char **argv);
int oci_ps(int argc, char **argv);

#endif
