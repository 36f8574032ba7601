/* How PID 1 and the workload child tell the supervisor how setup ended
 * (isolation.md §1). The status pipe carries `F` once PID 1 has forked the
 * workload, then "<code> <lines>" for a failure; `F` then EOF means the
 * workload exec succeeded (the child's copy is close-on-exec); EOF without
 * `F` means PID 1 died in setup. The
 * supervisor prints the lines (so a detached box's errors reach the
 * caller), exits with the code, and writes `x` on the alive pipe. */
#ifndef KERN_REPORT_H
#define KERN_REPORT_H

#include <sys/types.h>

/* The status pipe of PID 1 is diag_status_fd (diag.h): -1 when a step runs
 * standalone and prints its own lines. */

/* Setup failure (125): `kern: sandbox setup failed: <why>`; never returns.
 * die_setup() of diag.h under its older name, for the callers not yet
 * moved to it. */
void step_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Exec failure in the workload child: 126 for EACCES, else 127, with the
 * `kern: cannot start` line and its hint; never returns. */
void exec_fail(const char *cmd, int err) __attribute__((noreturn));

/* PID 1, just before forking the workload. */
void status_forked(void);
/* The supervisor's reading of everything the pipe carried until EOF:
 * 0 = started, else the failure code with its lines in text; -1 if PID 1
 * died in setup without a word. */
int status_parse(const char *buf, size_t n, char *text, size_t len);

/* The init's final report, on the report socket: the workload's wait
 * status. */
struct init_report {
	int status;	/* as from waitpid */
};

#endif
