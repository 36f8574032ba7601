/* PID 1, part two (isolation.md §2.7 steps 28-34) and kern's init: lock
 * the process down, fork the workload, then reap every orphan, forward
 * signals and report how the workload ended. */
#ifndef KERN_INIT_H
#define KERN_INIT_H

#include "box.h"

/* Never returns. report_fd carries the workload's wait status to the
 * supervisor (-1 standalone); alive_fd is KERN_ALIVE_FD or -1. */
void init_run(const struct run_config *rc, int report_fd, int alive_fd) __attribute__((noreturn));

/* The signals init forwards to the workload. */
extern const int init_forwarded[6];

#endif
