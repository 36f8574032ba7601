/* Descriptor hygiene shared by every process kern forks. */
#ifndef KERN_FDUTIL_H
#define KERN_FDUTIL_H

#include <stddef.h>

/* Close every descriptor >= 3 except the ones listed (-1 entries are
 * ignored): close_range(2) around them, with a /proc/self/fd loop where
 * close_range is missing. */
void close_fds_except(const int *keep, int nkeep);
int set_cloexec(int fd, int on);
/* One read(2) of a small file (a /proc or /sys entry) into buf, NUL
 * terminated. Returns the length (> 0), or -1 when it cannot be opened
 * or is empty. */
long read_small_file(const char *path, char *buf, size_t len);
/* Read into buf until len bytes, end of file or an error (EINTR retried);
 * returns how many were read. */
size_t read_full(int fd, char *buf, size_t len);
/* Read up to size bytes of fd (a regular file the caller has fstat'ed and
 * bounded) into a new NUL-terminated buffer; *len is what was read. NULL
 * when out of memory. The caller closes fd. */
char *read_fd_bytes(int fd, size_t size, size_t *len);
/* One message of len bytes on a UNIX socket, carrying fd (SCM_RIGHTS)
 * when fd >= 0; EINTR retried, never SIGPIPE. Returns 0 once it is sent
 * whole, -1 otherwise. */
int send_with_fd(int sock, const void *buf, size_t len, int fd);
/* One message of up to len bytes; a descriptor that came with it goes to
 * *fd (close-on-exec), else *fd is -1. Returns the length, 0 at end of
 * file, -1 on an error. */
long recv_with_fd(int sock, void *buf, size_t len, int *fd);

#endif
