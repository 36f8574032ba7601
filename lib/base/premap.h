#pragma once
/* Pages mapped ahead of their first touch, one madvise(2) per range.
 *
 * On some VMs each first touch of a page is a page fault of 10-15 µs,
 * and after a fork each page both processes share is a copy-on-write
 * fault in whichever writes it first (50-80 µs); a page mapped by
 * MADV_POPULATE_* costs well under 1 µs there. A box start touches a few
 * dozen pages: these map them in bulk. Where a fault costs about 2 µs
 * (another VM kind measured) mapping ahead costs more than it saves, since
 * about half the pages mapped are never touched (a start without it:
 * 0.96-0.97x back to back there): premap_pays() tells which machine this
 * is. Best effort: a kernel without MADV_POPULATE_* (before 5.14) faults
 * the pages in as before. */
#include <stddef.h>

/* 1 when a first touch of a fresh page takes 5 µs or more here: the
 * fastest of three, timed once per process on three zero-fill pages of
 * its own static data (about 10 µs), so that a start preempted in a
 * burst does not take the wait for a slow fault (one timing alone did,
 * for half of a burst of 200); a child forked after the first call
 * inherits the answer.
 * The test build takes KERN_TEST_PREMAP=1 for 1. premap() and
 * premap_stack() do nothing unless it is 1; other callers ask it. */
int premap_pays(void);

/* The pages of [p, p + len) writable: a large static struct of which a
 * start touches a page here and there. */
void premap(void *p, size_t len);

/* The same whatever premap_pays() says, for a struct a start writes
 * nearly every page of (the cgroup layout's paths, a box record): one
 * call costs less than the faults it saves on any machine, where a page
 * first read and then written even faults twice. */
void premap_dense(void *p, size_t len);

/* The STACK_PREMAP bytes below the first caller's frame, writable: kern
 * box calls it as it starts, and the supervisor again once PID 1 has its
 * id maps (not before: PID 1 waits for them), so that the frames between
 * kern box and supervise() are covered. Not PID 1: it starts on a stack
 * of its own (supervise.c), whose top it maps itself. */
#define STACK_PREMAP (64 << 10)
void premap_stack(void);

/* Around a clone(2) whose child starts on a stack of its own and never
 * returns into the caller's frames (PID 1): the mapped stack below this
 * call's own frame stays the caller's alone (MADV_WIPEONFORK: the child's
 * copy is zero pages it never touches). Every frame of the callers, and
 * whatever the child reads in them (its arguments), lies above that line
 * and is shared, as is one page below it, where the C library's clone()
 * keeps its frame: the line is drawn by a function of its own, never
 * inlined, since within one frame the compiler orders locals as it likes
 * (a local's address taken as the line put a caller's struct below it in
 * some builds, and the child read zeros). After a clone every page the
 * two share is a copy-on-write fault in whichever writes it first (16-26
 * µs on a VM, with a flush of the other CPU's TLB); the supervisor's
 * deeper frames after the clone then cost nothing, and premap_stack()
 * afterwards maps only the shared pages. premap_stack_share(), right after
 * the clone, undoes it: a later fork(2), whose child runs on these very
 * pages, gets them. Nothing unless premap_pays(). */
void premap_stack_unshare(void);
void premap_stack_share(void);

/* Not the code: a fork copies no page table entry of the file's own
 * mappings, so PID 1 faults in the code it runs, but the kernel maps 16
 * neighbouring pages a fault (fault-around): 7 faults a start. Mapping all
 * 300 text pages ahead to save those cost more than it saved on both
 * machine kinds measured (0.97-0.98x without, 300-600 starts
 * interleaved). */
