/* The log of a detached box (box-cli.md §2.5), with a bound (OT-7): the
 * box writes into a pipe and a relay process outside it copies the bytes
 * to <runtime>/logs/<file>, keeping the newest output. When the file
 * would pass LOG_PART_MAX it is renamed to <file>.1 (replacing the one
 * before) and a new <file> starts: at most 2 x LOG_PART_MAX on disk per
 * box, however much the box writes. */
#ifndef KERN_LOGCAP_H
#define KERN_LOGCAP_H

#define LOG_PART_MAX (8u << 20)

/* Open (create, 0600, no symlink) `file` in the directory `dir` and
 * start the relay into it, detached from the caller (its own child's
 * child, stdio on /dev/null, holding nothing of the caller's). Returns
 * the write end of the relay's pipe (close-on-exec) for the caller to put
 * on its stdout and stderr, or -1 with errno; *what names the failing
 * call. The relay ends when every copy of that end is closed. */
int log_relay_start(const char *dir, const char *file, const char **what);

#endif
