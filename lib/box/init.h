/* PID 1, part two (isolation.md §2.7 steps 28-34) and kern's init: lock
 * the process down, fork the workload, then reap every orphan, forward
 * signals and report how the workload ended. */
#ifndef KERN_INIT_H
#define KERN_INIT_H

#include <signal.h>
#include <sys/types.h>

#include "box/box.h"

/* Never returns. report_fd carries the workload's wait status to the
 * supervisor (-1 standalone); alive_fd is KERN_ALIVE_FD or -1. init
 * overwrites main()'s argv (proctitle.h): nothing in rc may point into
 * it (rc->ld.apparmor may, it is used before). */
void init_run(const struct run_config *rc, int report_fd, int alive_fd) __attribute__((noreturn));

/* The signals init forwards to the workload. */
extern const int init_forwarded[6];

/* PID 1 holds the signals init forwards blocked from its first
 * instruction (a pid namespace's init never hears a signal it has no
 * handler for: one sent while it builds the root would be lost), so the
 * mask it has is not the caller's: this is, and init_run() gives it to
 * the workload. The applet chain's PID 1 keeps them blocked through its
 * execs and finds the caller's in KERN_PID1 (chain.h). Never set (init
 * run alone), the workload gets the mask init was started with. */
void init_caller_mask(const sigset_t *mask);
/* 1 and the mask into *mask when init_caller_mask() set one. */
int init_caller_mask_get(sigset_t *mask);

/* The workload's side, before its exec: SIGCHLD and init_forwarded back
 * to their default dispositions (a forwarding parent may have handled
 * them; ignored ones must not stay ignored). */
void init_signals_default(void);
/* set = SIGCHLD plus init_forwarded: what a forwarding parent blocks and
 * waits for. */
void init_signal_set(sigset_t *set);
/* Wait (set blocked) until SIGCHLD arrives, passing every other signal of
 * set on to child. The child is in a session of its own, so nothing else
 * (no terminal, no kill of the caller's group) reaches it: every signal
 * is passed on once. outside_only (init): only those sent from outside
 * the box's pid namespace. */
void forward_until_sigchld(pid_t child, const sigset_t *set, int outside_only);

#endif
