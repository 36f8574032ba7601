/* FZ-7: the WWW-Authenticate parser, and the realm host extraction that
 * decides whether credentials may follow, against an independent
 * reference written the simple way. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "oci/ref.h"
#include "oci/wwwauth.h"

/* Reference: scheme http(s)://, authority up to / ? #, userinfo to the
 * last '@', then a [v6] literal or the text before ':', lowercased. */
static int ref_host(const char *url, char *out, size_t len)
{
	const char *p;
	if (!strncasecmp(url, "https://", 8))
		p = url + 8;
	else if (!strncasecmp(url, "http://", 7))
		p = url + 7;
	else
		return -1;
	char auth[1100];
	size_t n = 0;
	while (p[n] && !strchr("/?#", p[n]) && n < sizeof auth - 1) {
		auth[n] = p[n];
		n++;
	}
	auth[n] = 0;
	char *h = strrchr(auth, '@');
	h = h ? h + 1 : auth;
	if (*h == '[') {
		char *e = strchr(h, ']');
		if (!e)
			return -1;
		e[1] = 0;
	} else {
		char *c = strchr(h, ':');
		if (c)
			*c = 0;
	}
	if (!*h || strlen(h) >= len)
		return -1;
	for (size_t i = 0; h[i]; i++)
		out[i] = (char)tolower((unsigned char)h[i]);
	out[strlen(h)] = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hdr[4096], a_host[256], b_host[256];
	struct www_auth a;
	int https;
	if (size >= sizeof hdr)
		return 0;
	memcpy(hdr, data, size);
	hdr[size] = 0;
	if (www_auth_parse(hdr, &a) == 0 && a.realm[0]) {
		int x = url_host(a.realm, a_host, sizeof a_host, &https);
		int y = ref_host(a.realm, b_host, sizeof b_host);
		if (x != y || (x == 0 && strcmp(a_host, b_host) != 0))
			abort();
	}
	return 0;
}
