#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/premap.h"
#include "base/testhook.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* 5 µs: a fault on the VMs where mapping ahead paid took 10-15 µs, one
 * where it did not about 2 µs. */
#define SLOW_FAULT_NS 5000

static long long now_ns(void)
{
	/* The system call, not the vDSO, whose page would fault in first. */
	struct timespec ts;
	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int premap_pays(void)
{
	static int pays = -1;
	if (pays >= 0)
		return pays;
	if (test_flag("KERN_TEST_PREMAP"))
		return pays = 1;
	/* The fastest of three first touches: a start preempted between two
	 * clock reads (a burst of starts on a busy machine) would time the
	 * wait, not the fault. The pages are zero-fill ones of our own
	 * static data, untouched until here (a mapping made and unmapped
	 * for it cost two more system calls). */
	static char pages[3][4096] __attribute__((aligned(4096)));
	volatile char *page;
	long long fastest = -1;
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		page = pages[i];
		long long t0 = now_ns();
		page[0] = 1;
		long long t = now_ns() - t0;
		if (fastest < 0 || t < fastest)
			fastest = t;
	}
	return pays = fastest >= SLOW_FAULT_NS;
}

void premap_dense(void *p, size_t len)
{
	char *start = p, *end = start + len;
	start -= (uintptr_t)start & 4095;
	(void)madvise(start, (size_t)(end - start), MADV_POPULATE_WRITE);
}

void premap(void *p, size_t len)
{
	if (premap_pays())
		premap_dense(p, len);
}

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#define MADV_KEEPONFORK 19
#endif

/* The first premap_stack()'s frame, page aligned: the top for later calls. */
static char *stack_top;
/* [stack_top - STACK_PREMAP, stack_unshared_end): the caller's alone over a
 * clone (premap_stack_unshare); 0 when none was. */
static char *stack_unshared_end;

void premap_stack(void)
{
	if (!premap_pays())
		return;
	char here;
	if (!stack_top) {
		stack_top = &here;
		stack_top -= (uintptr_t)stack_top & 4095;
	}
	/* Pages kept out of a clone are still mapped and ours: only those
	 * above them were shared. A range the stack's mapping does not reach
	 * fails as a whole and changes nothing. */
	char *lo = stack_unshared_end ? stack_unshared_end : stack_top - STACK_PREMAP;
	(void)madvise(lo, (size_t)(stack_top + 4096 - lo), MADV_POPULATE_WRITE);
}

__attribute__((noinline)) void premap_stack_unshare(void)
{
	if (!premap_pays() || !stack_top)
		return;
	/* This frame lies below every caller's: its page and those above are
	 * shared, and one more below for the C library's clone(), called next
	 * at this same depth, whose frame a libc may have its child read. */
	char *frame = __builtin_frame_address(0);
	char *lo = stack_top - STACK_PREMAP;
	char *end = frame - ((uintptr_t)frame & 4095) - 4096;
	if (end <= lo || end > stack_top)
		return;
	if (madvise(lo, (size_t)(end - lo), MADV_WIPEONFORK) == 0)
		stack_unshared_end = end;
}

void premap_stack_share(void)
{
	if (stack_unshared_end)
		(void)madvise(stack_top - STACK_PREMAP, (size_t)(stack_unshared_end - (stack_top - STACK_PREMAP)),
			      MADV_KEEPONFORK);
}
