/* Reading a byte buffer from a position: what a decoder or a response
 * reader hands out before it asks its source for more. */
#ifndef KERN_BUF_H
#define KERN_BUF_H

#include <stddef.h>
#include <string.h>

/* Copies what is left of data (from *pos to end), at most len bytes, to
 * out and moves *pos past it. Returns the count (0 when nothing is left). */
static inline size_t buf_take(void *out, size_t len, const void *data, size_t *pos, size_t end)
{
	size_t n = end - *pos;
	if (n > len)
		n = len;
	memcpy(out, (const char *)data + *pos, n);
	*pos += n;
	return n;
}

#endif
