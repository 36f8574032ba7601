/* Time for deadlines and waits (never dates). */
#ifndef KERN_CLOCK_H
#define KERN_CLOCK_H

#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t now_ms(void);
/* Sleep ms milliseconds; a signal handler does not cut it short. */
void sleep_ms(long ms);

#endif
