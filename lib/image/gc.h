/* Collecting the image cache: what `kern gc` does, callable from
 * `kern recover` too. Never touches a complete entry or a copy a live box
 * uses; prints a note per removal. */
#ifndef KERN_IMGGC_H
#define KERN_IMGGC_H

void image_gc(void);

#endif
