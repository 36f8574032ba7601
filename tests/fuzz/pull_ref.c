/* FZ-4: reference normaliser and cache key. Properties: the key matches
 * [A-Za-z0-9_-]+-[0-9a-f]{16} and its name part is the sanitised
 * reference, with at most ":latest" appended; a valid reference's
 * canonical form is itself valid and canonicalises to itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/cachekey.h"
#include "oci/ref.h"

static void sanitise(const char *s, char *out)
{
	for (; *s; s++)
		*out++ = ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
			  (*s >= '0' && *s <= '9') || *s == '_' || *s == '-') ? *s : '_';
	*out = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char ref[520], key[700], want_a[540], want_b[540], canon[800], canon2[800], tmp[540];
	struct image_ref r, r2;
	const char *why;
	if (size >= 500)
		return 0;
	memcpy(ref, data, size);
	ref[size] = 0;
	if (cache_key(ref, key, sizeof key) == 0) {
		size_t n = strlen(key);
		if (n < 18 || key[n - 17] != '-')
			abort();
		for (size_t i = n - 16; i < n; i++)
			if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f')))
				abort();
		key[n - 17] = 0;
		sanitise(ref, want_a);
		memcpy(tmp, ref, strlen(ref) + 1);
		strcat(tmp, ":latest");
		sanitise(tmp, want_b);
		if (strcmp(key, want_a) != 0 && strcmp(key, want_b) != 0)
			abort();
	}
	if (image_ref_parse(ref, &r, &why) == 0) {
		image_ref_canonical(&r, canon, sizeof canon);
		if (strlen(canon) <= REF_MAX) {
			if (image_ref_parse(canon, &r2, &why) != 0)
				abort();
			image_ref_canonical(&r2, canon2, sizeof canon2);
			if (strcmp(canon, canon2) != 0 || strcmp(r.registry, r2.registry) != 0 ||
			    strcmp(r.repo, r2.repo) != 0 || r.loopback != r2.loopback)
				abort();
		}
	}
	return 0;
}
