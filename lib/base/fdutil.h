/* Descriptor hygiene shared by every process kern forks. */
#ifndef KERN_FDUTIL_H
#define KERN_FDUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Close every descriptor >= 3 except the ones listed (-1 entries are
 * ignored): close_range(2) around them, with a /proc/self/fd loop where
 * close_range is missing. */
void close_fds_except(const int *keep, int nkeep);
int set_cloexec(int fd, int on);
/* One read(2) of a small file (a /proc or /sys entry) into buf, NUL
 * terminated. Returns the length (> 0), or -1 when it cannot be opened
 * or is empty. */
long read_small_file(const char *path, char *buf, size_t len);
/* Each line of a small file (a /proc file, /etc/subuid), newline removed,
 * to fn; ctx is fn's; at most max_lines lines. The file is read whole into
 * one static buffer when it fits (32 KiB), as mountinfo and the others do
 * on nearly every host: a stdio stream and getline() are heap
 * allocations, which musl's allocator maps as fresh pages and unmaps
 * again, a page fault and a TLB flush each on the start path. A larger
 * file goes through stdio. fn must not call each_line() itself. Returns
 * 0, or -1 with errno when the file cannot be opened. */
int each_line(const char *path, void (*fn)(char *line, void *ctx), void *ctx, int max_lines);
/* Write text to a small file (a /proc or /sys entry) with one write(2).
 * 0, or -1 with errno. */
int write_small_file(const char *path, const char *text);
/* Read into buf until len bytes, end of file or an error (EINTR retried);
 * returns how many were read. */
size_t read_full(int fd, char *buf, size_t len);
/* The whole of fd, which must be a regular file of at most max bytes
 * (and owned by owner, unless owner is (uid_t)-1), in a new NUL-terminated
 * buffer; *len is what was read. fd is closed in every case. NULL with
 * errno: err when the file is not what was asked for, ENOMEM. */
char *read_regular_fd(int fd, size_t max, uid_t owner, int err, size_t *len);
/* 1 when the other end of a socket or pipe is closed (its holder exited),
 * without waiting. */
int peer_closed(int fd);
/* The most descriptors one message carries. */
#define FDS_MAX 8
/* One message of len bytes on a UNIX socket, carrying nfds descriptors
 * (SCM_RIGHTS, at most FDS_MAX); EINTR retried, never SIGPIPE. Returns 0
 * once it is sent whole, -1 otherwise. Descriptors in flight (sent, not
 * yet received) count against the sender's RLIMIT_NOFILE, per user,
 * unless it has CAP_SYS_RESOURCE in the first user namespace, which a
 * box's PID 1 never has: when many boxes of one user start at once (200
 * hand over 7 namespaces each) the kernel refuses with ETOOMANYREFS until
 * their supervisors have read theirs, moments later. That is waited out,
 * for up to FDS_INFLIGHT_WAIT_MS, then ETOOMANYREFS is the error. */
#define FDS_INFLIGHT_WAIT_MS 5000
int send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds);
/* What a failed send_fds() says after "cannot <do this>: ": the syscall
 * and errno's text, or for ETOOMANYREFS that limit and why it was hit.
 * Static buffer. */
const char *send_fds_error(int err);
/* One message of up to len bytes; the first max
 * descriptors that came with it go to fds (close-on-exec) and their count
 * to *nfds, the rest are closed. Returns the length, 0 at end of file, -1
 * on an error. */
long recv_fds(int sock, void *buf, size_t len, int *fds, int max, int *nfds);

#endif
