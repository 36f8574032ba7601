/* FZ-5 (security-tests.md §11, fuzz targets), the command line part: the
 * parsers of `--mount` CSV, `-v`, `--tmpfs`, sizes, seconds, `--cpus`,
 * capability names, `--ulimit`, numeric `--user` and `--env-file` lines, on
 * arbitrary bytes. Byte 0 picks the parser, the rest is its argument.
 * Properties: no crash (ASan, UBSan); what a parser accepts round-trips
 * (rendered the way kern renders it and parsed again, it is the same); sizes
 * and plain numbers agree with a reference written separately; a bind or
 * tmpfs target that passes the checks is clean, absolute and not a refused
 * place; every env-file entry is one line with a non-empty name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/path.h"
#include "base/strv.h"
#include "box/envfile.h"
#include "box/mountspec.h"
#include "box/users.h"
#include "lockdown/lockdown.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *input)
{
	fprintf(stderr, "FZ-5 property broken: %s (input '%s')\n", what, input);
	abort();
}

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* A bind whose checks passed: its target is clean and allowed. */
static void check_target(const char *dst, const char *s)
{
	if (dst[0] != '/' || !path_is_clean_abs(dst) || strstr(dst, "//") ||
	    (strlen(dst) > 1 && dst[strlen(dst) - 1] == '/'))
		fail("an accepted target is not clean", s);
	if (!strcmp(dst, "/") || !strcmp(dst, "/dev") || path_is_under(dst, "/proc") ||
	    path_is_under(dst, "/sys"))
		fail("an accepted target is a refused place", s);
}

static void mount_round_trip(const struct bind_spec *b, const char *s)
{
	static char out[20000];
	struct bind_spec again;
	const char *why;
	if (format_mount(b, out, sizeof out) < 0)
		return;	/* too long to render: kern refuses it then */
	if (parse_mount(out, &again, &why) < 0)
		fail("a rendered --mount does not parse", s);
	if (!same(again.src, b->src) || !same(again.dst, b->dst) || again.ro != b->ro)
		fail("a rendered --mount parses to another bind", s);
	free(again.src);
	free(again.dst);
}

static void fuzz_mount(const char *s, int volume)
{
	struct bind_spec b;
	const char *why;
	if ((volume ? parse_volume(s, &b, &why) : parse_mount(s, &b, &why)) < 0)
		return;
	if (volume && (strchr(b.src, ':') || strchr(b.dst, ':')))
		fail("-v gave a path holding ':'", s);
	mount_round_trip(&b, s);
	if (bind_check(&b, &why) == 0) {
		check_target(b.dst, s);
		/* Checked once, the target is in its final form. */
		char *before = strdup(b.dst);
		if (!before || bind_check(&b, &why) < 0 || strcmp(before, b.dst) != 0)
			fail("bind_check is not idempotent", s);
		free(before);
		mount_round_trip(&b, s);
	}
	free(b.src);
	free(b.dst);
}

static void fuzz_tmpfs(const char *s)
{
	struct tmpfs_spec t, again;
	const char *why;
	char spec[4200];
	if (parse_tmpfs(s, &t, &why) < 0)
		return;
	check_target(t.path, s);
	if (strchr(t.path, ':') || !strncmp(t.path, "/dev/", 5))
		fail("an accepted tmpfs path holds ':' or lies below /dev", s);
	snprintf(spec, sizeof spec, "%s:%llu", t.path, (unsigned long long)t.size);
	if (parse_tmpfs(spec, &again, &why) < 0 || strcmp(again.path, t.path) || again.size != t.size)
		fail("a rendered --tmpfs parses to another tmpfs", s);
	free(t.path);
	free(again.path);
}

/* Reference: digits, at most one unit letter, the whole under 32 bytes,
 * no overflow of 64 bits. */
static int ref_size(const char *s, int allow_t, uint64_t *out)
{
	size_t n = strlen(s);
	unsigned shift = 0;
	unsigned __int128 v = 0;
	if (n == 0 || n >= 32)
		return -1;
	const char *units = allow_t ? "bkmgt" : "bkmg", *u;
	char last = s[n - 1] >= 'A' && s[n - 1] <= 'Z' ? (char)(s[n - 1] + 32) : s[n - 1];
	if ((u = strchr(units, last)) && last) {
		shift = 10 * (unsigned)(u - units);
		n--;
	}
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > UINT64_MAX)
			return -1;
	}
	v <<= shift;
	if (v > UINT64_MAX)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static void fuzz_numbers(const char *s, int allow_t)
{
	uint64_t a = 0, b = 0, m;
	unsigned long long u, sec;
	int ra = parse_size(s, allow_t, &a), rb = ref_size(s, allow_t, &b);
	if (ra != rb || (ra == 0 && a != b))
		fail("parse_size disagrees with the reference", s);
	if (parse_u64(s, &u) == 0) {
		char back[32];
		snprintf(back, sizeof back, "%llu", u);
		/* Leading zeros are the only other spelling. */
		if (strcmp(back, s + strspn(s, "0")) != 0 && !(u == 0 && strspn(s, "0") == strlen(s)))
			fail("parse_u64 misread a number", s);
	}
	if (parse_seconds(s, &sec) == 0 && (sec < 1 || sec > 100000000ULL))
		fail("parse_seconds accepted a value out of range", s);
	if (parse_cpus(s, &m) == 0) {
		char back[32];
		uint64_t again;
		if (m == 0)
			fail("parse_cpus accepted zero", s);
		snprintf(back, sizeof back, "%llu.%06llu", (unsigned long long)(m / 1000000),
			 (unsigned long long)(m % 1000000));
		if (parse_cpus(back, &again) < 0 || again != m)
			fail("parse_cpus does not round-trip", s);
	}
	int cap = parse_cap(s);
	if (cap >= 0) {
		const char *name = cap_name(cap);
		if (!name || parse_cap(name) != cap)
			fail("a capability name does not round-trip", s);
	}
}

static void fmt_rlim(char *buf, size_t n, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, n, "unlimited");
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

static void fuzz_ulimit(const char *s)
{
	struct ulimit_spec u, again;
	const char *why;
	char spec[128], soft[32], hard[32];
	if (ulimit_parse(s, &u, &why) < 0)
		return;
	if (u.soft > u.hard)
		fail("--ulimit accepted soft above hard", s);
	fmt_rlim(soft, sizeof soft, u.soft);
	fmt_rlim(hard, sizeof hard, u.hard);
	snprintf(spec, sizeof spec, "%.*s=%s:%s", (int)(strchr(s, '=') - s), s, soft, hard);
	if (ulimit_parse(spec, &again, &why) < 0 || again.resource != u.resource || again.soft != u.soft ||
	    again.hard != u.hard)
		fail("a rendered --ulimit parses to another limit", s);
}

static void fuzz_user(const char *s)
{
	static struct lockdown a, b;
	char out[2048], out2[2048];
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (user_parse_numeric(s, &a) < 0)
		return;
	user_format(&a, out, sizeof out);
	if (user_parse_numeric(out, &b) < 0 || b.uid != a.uid || b.gid != a.gid || b.ngroups != a.ngroups ||
	    memcmp(a.groups, b.groups, sizeof(a.groups[0]) * (size_t)a.ngroups) != 0)
		fail("a numeric user does not round-trip", s);
	user_format(&b, out2, sizeof out2);
	if (strcmp(out, out2) != 0)
		fail("a numeric user renders two ways", s);
}

/* --env-file: the bytes as a file (a memfd, read through /proc). */
static void fuzz_envfile(const uint8_t *data, size_t size)
{
	struct strv out = {0};
	char why[256], path[64];
	int fd = memfd_create("envfile", 0);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (envfile_read(path, &out, why, sizeof why) == 0) {
		/* Reference count: lines that are neither empty nor comments. */
		size_t lines = 0;
		for (size_t i = 0; i < size;) {
			const uint8_t *nl = memchr(data + i, '\n', size - i);
			size_t end = nl ? (size_t)(nl - data) : size;
			lines += end > i && data[i] != '#';
			i = end + 1;
		}
		if (out.n != lines)
			fail("env-file entries and lines disagree", "");
		for (size_t i = 0; i < out.n; i++) {
			const char *eq = strchr(out.v[i], '=');
			if (!eq || eq == out.v[i] || strchr(out.v[i], '\n') || out.v[i][0] == '#')
				fail("an env-file entry is not NAME=VALUE on one line", out.v[i]);
		}
	} else if (strncmp(why, path, strlen(path)) != 0) {
		fail("an env-file refusal does not name the file", why);
	}
	strv_free(&out);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[8192];
	if (size < 1 || size > sizeof s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	switch (data[0] % 8) {
	case 0: fuzz_mount(s, 0); break;
	case 1: fuzz_mount(s, 1); break;
	case 2: fuzz_tmpfs(s); break;
	case 3: fuzz_numbers(s, data[0] & 0x80); break;
	case 4: fuzz_ulimit(s); break;
	case 5: fuzz_user(s); break;
	case 6: fuzz_envfile(data + 1, size - 1); break;
	default: fuzz_numbers(s, 1); break;
	}
	return 0;
}
