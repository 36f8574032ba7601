/* Descriptor hygiene shared by every process kern forks. */
#ifndef KERN_FDUTIL_H
#define KERN_FDUTIL_H

/* Close every descriptor >= 3 except the ones listed (-1 entries are
 * ignored): close_range(2) around them, with a /proc/self/fd loop where
 * close_range is missing. */
void close_fds_except(const int *keep, int nkeep);
int set_cloexec(int fd, int on);

#endif
