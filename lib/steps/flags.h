/* One flag table per chain step. A step's applet parses its argv into its
 * config struct with from_argv(); `kern box --plan` prints the same struct
 * back with to_argv(). Both read one table, so what the plan prints is
 * what the step parses: to_argv(from_argv(x)) == x for every canonical x
 * (flags in table order, numbers in the form to_argv writes). */
#ifndef KERN_STEPS_FLAGS_H
#define KERN_STEPS_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "base/strv.h"

enum flag_kind {
	FLAG_SET,	/* bare: sets an int to .val (1 when .val is 0) */
	FLAG_STR,	/* const char *, checked by .check */
	FLAG_WORD,	/* int: the index of the value in .words */
	FLAG_INT,	/* int, decimal in [.min, .max] */
	FLAG_U64,	/* uint64_t, decimal in [.min, .max] */
	FLAG_SIZE,	/* uint64_t bytes (parse_size, k m g t), >= .min */
	FLAG_CPUS,	/* uint64_t micro-CPUs (parse_cpus); printed as 0.5, 2 */
	FLAG_SECONDS,	/* unsigned long long whole seconds >= 1 */
	FLAG_HEX,	/* uint64_t in hex; printed as 16 digits */
	FLAG_LIST,	/* repeatable: items in an array, their number in an int */
};

struct flag {
	const char *name;	/* "--memory" */
	const char *alias;	/* "-m", or NULL */
	enum flag_kind kind;
	size_t off;		/* offsetof the field in the step's config */
	/* FLAG_GIVEN(type, field): an int set when the flag is seen; to_argv
	 * then prints the flag exactly when it is set. Without it a flag is
	 * printed when its value differs from the table's defaults (always,
	 * when required). */
	size_t given;
	int required;
	int val;		/* FLAG_SET */
	uint64_t min, max;	/* FLAG_INT, FLAG_U64 (max 0: none), FLAG_SIZE (min) */
	const char *const *words;	/* FLAG_WORD, NULL-terminated */
	/* FLAG_STR and string lists: 0, or -1 with *why set, for a bad value. */
	int (*check)(const char *v, const char **why);
	/* FLAG_LIST. Items are const char * (elem 0) or .elem bytes each,
	 * filled by .parse and printed by .format. */
	size_t count;		/* offsetof the int count */
	int max_items;
	size_t elem;
	int indirect;		/* the field points to the array (struct fs_config) */
	/* Two flags may share one list and keep their order (--env and
	 * --env-file): FLAG_GIVEN-style offset of an int array saying which
	 * .tag added each item. */
	size_t tags;
	int tag;
	int (*parse)(const char *v, void *item, const char **why);
	int (*format)(const void *item, char *buf, size_t len);
};

#define FLAG_GIVEN(type, field) (offsetof(type, field) + 1)

#define FLAG_MAX_POS 2

/* A step's table: at most 64 flags. */
struct flag_table {
	const char *step;		/* "kern-cg" */
	const char *area;		/* of its error lines: "box", "image", "pull" */
	const struct flag *flags;
	int nflags;
	const void *defaults;		/* the config before any flag */
	size_t size;
	/* Positional arguments (kern-unpack LAYER DIR), in order: offsets
	 * of const char * fields; any other bare word is an error. */
	int npos;
	size_t pos[FLAG_MAX_POS];
};

enum flag_err {
	FLAG_UNKNOWN = 1,	/* not in the table */
	FLAG_NOVALUE,		/* last before `--` or the end */
	FLAG_BADVALUE,
	FLAG_TOOMANY,		/* a list is full */
	FLAG_MISSING,		/* a required flag was not given */
	FLAG_EXTRA,		/* a bare word no positional takes */
};

struct flag_error {
	enum flag_err kind;
	const struct flag *flag;	/* NULL for UNKNOWN and EXTRA */
	const char *arg;		/* the word as written */
	const char *value;
	const char *why;		/* NULL, or what is wrong with value */
	char whybuf[160];
};

/* Parse argv[1..] up to `--` into cfg, which the caller set to the
 * table's defaults (and pointed indirect lists at their storage). Returns the index of `--` (argc when there is none), or -1 with *err
 * filled. Values are borrowed from argv or allocated by .parse. */
int from_argv(const struct flag_table *t, int argc, char **argv, void *cfg, struct flag_error *err);

/* Append cfg's flags to out in table order, then the positionals. Values
 * are copied. 0, or -1 when out of memory or a value cannot be printed. */
int to_argv(const struct flag_table *t, const void *cfg, struct strv *out);

/* The error in one line without the step's name: "unknown flag '--x'",
 * "invalid --memory 'lots'", "--fd needs a value", ... */
void flag_error_text(const struct flag_error *e, char *buf, size_t len);

/* from_argv() for a step's main: on bad input it prints
 * `error: AREA: STEP: <flag_error_text>` and a hint to --help, and exits 1
 * (die_hint()). */
int step_args(const struct flag_table *t, int argc, char **argv, void *cfg);

/* A step applet's own lines, tagged from its table, so that every step
 * names itself one way: step_fatal() prints `error: AREA: STEP: <msg>`
 * (fatal()) and returns; step_die() then exits 1 as die() does.
 * step_die_setup() prints `kern: sandbox setup failed: STEP: <msg>` and
 * exits 125 as die_setup() does; the _errno form appends
 * `: <strerror(errno)>`. A failure kern box reports too (PID 1's
 * environment, user, rlimits) keeps kern box's untagged line instead, so
 * that a chain run by hand fails with the same bytes. */
void step_fatal(const struct flag_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void step_die(const struct flag_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void step_die_setup(const struct flag_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void step_die_setup_errno(const struct flag_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* 1500000 -> "1.5": --cpus as a person writes it. */
void flag_cpus_text(uint64_t micro, char *out, size_t len);

#endif
