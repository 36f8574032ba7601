#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

#include "base/parse.h"

int name_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return 0;
	}
	return 1;
}

int parse_u64(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (ULLONG_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_size(const char *s, int allow_t, uint64_t *out)
{
	char digits[32];
	size_t n = s ? strlen(s) : 0;
	unsigned shift = 0;
	unsigned long long v;
	if (n == 0 || n >= sizeof digits)
		return -1;
	memcpy(digits, s, n + 1);
	switch (tolower((unsigned char)digits[n - 1])) {
	case 'b': shift = 0; digits[--n] = 0; break;
	case 'k': shift = 10; digits[--n] = 0; break;
	case 'm': shift = 20; digits[--n] = 0; break;
	case 'g': shift = 30; digits[--n] = 0; break;
	case 't':
		if (!allow_t)
			return -1;
		shift = 40; digits[--n] = 0; break;
	default: break;
	}
	if (parse_u64(digits, &v) < 0)
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_seconds(const char *s, unsigned long long *out)
{
	char buf[24];
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == 's')
		buf[--n] = 0;
	if (parse_u64(buf, out) < 0 || *out < 1 || *out > 100000000ULL)
		return -1;
	return 0;
}

int parse_cpus(const char *s, uint64_t *micro)
{
	uint64_t whole = 0, frac = 0;
	int fdigits = 0, wdigits = 0;
	const char *p = s;
	if (!s)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++, wdigits++) {
		if (wdigits >= 7)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fdigits++) {
			if (fdigits >= 6)
				return -1;
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		if (fdigits == 0)
			return -1;
	}
	if (*p || wdigits + fdigits == 0)
		return -1;
	for (int i = fdigits; i < 6; i++)
		frac *= 10;
	*micro = whole * 1000000 + frac;
	return *micro > 0 ? 0 : -1;
}

int parse_cap(const char *s)
{
	char name[64] = "cap_";
	size_t n;
	cap_value_t v;
	if (!s)
		return -1;
	if (strncasecmp(s, "cap_", 4) == 0)
		s += 4;
	n = strlen(s);
	if (n == 0 || n + 5 > sizeof name)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* Names only: libcap would also take numbers. */
		if (!isalpha((unsigned char)s[i]) && s[i] != '_')
			return -1;
		name[4 + i] = (char)tolower((unsigned char)s[i]);
	}
	name[4 + n] = 0;
	if (cap_from_name(name, &v) < 0 || v < 0 || v > 63)
		return -1;
	return (int)v;
}

const char *cap_name(int n)
{
	static char names[64][32];
	char *s;
	if (n < 0 || n > 63)
		return NULL;
	if (names[n][0])
		return names[n];
	s = cap_to_name((cap_value_t)n);
	if (!s)
		return NULL;
	if (strncmp(s, "cap_", 4) == 0 && strlen(s) - 4 < sizeof names[n])
		strcpy(names[n], s + 4);
	cap_free(s);
	return names[n][0] ? names[n] : NULL;
}
