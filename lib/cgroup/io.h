/* Reading and writing cgroup control files, relative to a directory
 * descriptor of the cgroup. Every write is one write(2) of the whole value
 * (the kernel parses each write on its own). */
#ifndef KERN_CG_IO_H
#define KERN_CG_IO_H

#include <stddef.h>
#include <stdint.h>

/* "max" (v2) and v1's unlimited read back as CG_UNLIMITED. */
#define CG_UNLIMITED UINT64_MAX

/* Write s to dirfd/file. Returns 0 or -1 with errno. */
int cg_write(int dirfd, const char *file, const char *s);
/* Write s to dirfd/file, then read back what the file holds through the
 * same descriptor (one open, not two: a start writes and verifies several
 * v1 limits). Returns 0 with the value in buf (as cg_read() gives it; ""
 * when the read failed), or -1 with errno when the write failed. */
int cg_write_read(int dirfd, const char *file, const char *s, char *buf, size_t len);
/* A read-back of cg_write_read() or cg_read() as cg_read_u64() parses it. */
int cg_parse_u64(const char *s, uint64_t *v);
/* `key N` in the text of a flat keyed file, as cg_read_key() finds it. */
int cg_parse_key(char *text, const char *key, uint64_t *v);
/* Read up to len-1 bytes, trailing newline removed. Returns length or -1. */
long cg_read(int dirfd, const char *file, char *buf, size_t len);
/* A number, "max" or v1's near-2^63 "unlimited" (CG_UNLIMITED). */
int cg_read_u64(int dirfd, const char *file, uint64_t *v);
/* The value of `key N` in a flat keyed file (memory.events,
 * memory.oom_control). Returns 0, or -1 (ENOENT when the key is absent). */
int cg_read_key(int dirfd, const char *file, const char *key, uint64_t *v);
/* 1 if dirfd/file exists. */
int cg_has(int dirfd, const char *file);
/* 1 if the word w appears in the space-separated list s. */
int cg_word_in(const char *s, const char *w);

#endif
