/* Strict parsers for values that come from outside: every one rejects
 * leading/trailing junk, signs, empty strings and overflow. */
#ifndef KERN_PARSE_H
#define KERN_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* [A-Za-z0-9][A-Za-z0-9_.-]*, 1 to max bytes: the names kern puts in paths
 * and records (boxes, box-cli.md §2: 64; kern.toml profiles: 63). NULL is
 * not one. */
int name_ok(const char *s, size_t max);
#define BOX_NAME_MAX 64

/* Plain decimal digits only. */
int parse_u64(const char *s, unsigned long long *out);
/* Bytes: digits with an optional b/k/m/g suffix (case-insensitive), or
 * also t when allow_t. 1k = 1024. Returns -1 on junk or overflow. */
int parse_size(const char *s, int allow_t, uint64_t *out);
/* Whole seconds >= 1, optionally suffixed `s`. */
int parse_seconds(const char *s, unsigned long long *out);
/* CPU count as a decimal > 0 with at most 6 fractional digits, as
 * micro-CPUs (1.5 -> 1500000). */
int parse_cpus(const char *s, uint64_t *micro);
/* A capability name, `[CAP_]NAME` case-insensitive, as its number; -1 when
 * unknown. `ALL` is the caller's business. */
int parse_cap(const char *s);
/* Lower-case name of capability n ("chown"), or NULL. */
const char *cap_name(int n);

#endif
