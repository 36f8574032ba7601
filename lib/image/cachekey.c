#include <stdio.h>
#include <string.h>

#include "image/cachekey.h"

uint64_t fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Explicit tag or digest: the text after the last ':' has no '/'. */
static int has_tag(const char *ref)
{
	const char *c = strrchr(ref, ':');
	return c && !strchr(c, '/');
}

int cache_key(const char *ref, char *out, size_t len)
{
	size_t n = strlen(ref), o = 0;
	int tagged = has_tag(ref);
	size_t full = n + (tagged ? 0 : 7);
	char buf[600];
	if (full >= sizeof buf || full + 18 >= len)
		return -1;
	memcpy(buf, ref, n);
	if (!tagged)
		memcpy(buf + n, ":latest", 7);
	buf[full] = 0;
	for (size_t i = 0; i < full; i++) {
		unsigned char c = (unsigned char)buf[i];
		int keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			   (c >= '0' && c <= '9') || c == '_' || c == '-';
		out[o++] = keep ? (char)c : '_';
	}
	snprintf(out + o, len - o, "-%016llx", (unsigned long long)fnv1a64(buf, full));
	return 0;
}
