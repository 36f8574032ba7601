#include <stdint.h>
#include <sys/mman.h>

#include "base/premap.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void premap(void *p, size_t len)
{
	char *start = p, *end = start + len;
	start -= (uintptr_t)start & 4095;
	(void)madvise(start, (size_t)(end - start), MADV_POPULATE_WRITE);
}

void premap_stack(void)
{
	/* The first call's frame is the top for later ones. */
	static char *top;
	char here;
	if (!top) {
		top = &here;
		top -= (uintptr_t)top & 4095;
	}
	/* A range the stack's mapping does not reach fails as a whole and
	 * changes nothing. */
	(void)madvise(top - STACK_PREMAP, STACK_PREMAP + 4096, MADV_POPULATE_WRITE);
}
