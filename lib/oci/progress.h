/* The pull progress line (box-cli.md §2.8, §6.2): only when stderr is a
 * terminal and KERN_QUIET is unset, one line redrawn with carriage returns
 * and erased before anything else is printed. */
#ifndef KERN_PROGRESS_H
#define KERN_PROGRESS_H

#include <stdint.h>

void progress_begin(int nlayers);
/* Layer index (0-based) has now delivered done bytes of total (0 unknown). */
void progress_update(int layer, uint64_t done, uint64_t total);
/* Erase the line. */
void progress_end(void);

#endif
