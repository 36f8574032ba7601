#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "oci/wwwauth.h"

static int is_tchar(char c)
{
	return c && (isalnum((unsigned char)c) || strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* One auth-param: token "=" ( token / quoted-string ). Stores the value in
 * out when the name is wanted. Returns the position after it or NULL. */
static const char *param(const char *p, char *name, size_t nlen, char *out, size_t olen)
{
	size_t n = 0, o = 0;
	while (is_tchar(*p)) {
		if (n + 1 >= nlen)
			return NULL;
		name[n++] = *p++;
	}
	name[n] = 0;
	if (n == 0)
		return NULL;
	p = skip_ows(p);
	if (*p++ != '=')
		return NULL;
	p = skip_ows(p);
	if (*p == '"') {
		p++;
		while (*p && *p != '"') {
			if (*p == '\\') {
				p++;
				if (!*p)
					return NULL;
			}
			if ((unsigned char)*p < 0x20 || *p == 0x7f || o + 1 >= olen)
				return NULL;
			out[o++] = *p++;
		}
		if (*p++ != '"')
			return NULL;
	} else {
		while (is_tchar(*p) || *p == '/' || *p == ':') {
			if (o + 1 >= olen)
				return NULL;
			out[o++] = *p++;
		}
		if (o == 0)
			return NULL;
	}
	out[o] = 0;
	return p;
}

int www_auth_parse(const char *hdr, struct www_auth *a)
{
	char scheme[32], name[64], value[1024];
	size_t n = 0;
	const char *p = skip_ows(hdr);

	memset(a, 0, sizeof *a);
	while (is_tchar(*p)) {
		if (n + 1 >= sizeof scheme)
			return -1;
		scheme[n++] = *p++;
	}
	scheme[n] = 0;
	if (n == 0)
		return -1;
	if (strcasecmp(scheme, "Bearer") == 0)
		a->scheme = AUTH_BEARER;
	else if (strcasecmp(scheme, "Basic") == 0)
		a->scheme = AUTH_BASIC;
	else
		a->scheme = AUTH_OTHER;
	if (*p && *p != ' ' && *p != '\t')
		return -1;
	p = skip_ows(p);
	while (*p) {
		/* A second challenge ("..., Basic realm=x") ends the first: a
		 * token followed by whitespace rather than '='. */
		const char *t = p;
		while (is_tchar(*t))
			t++;
		if (t > p && (*t == ' ' || *t == '\t') && *skip_ows(t) != '=')
			break;
		const char *q = param(p, name, sizeof name, value, sizeof value);
		if (!q) {
			if (a->scheme == AUTH_OTHER)
				break;	/* token68 credentials of a scheme kern ignores */
			return -1;
		}
		if (strcasecmp(name, "realm") == 0) {
			if (a->realm[0] || strlen(value) >= sizeof a->realm)
				return -1;
			strcpy(a->realm, value);
		} else if (strcasecmp(name, "service") == 0) {
			if (a->service[0] || strlen(value) >= sizeof a->service)
				return -1;
			strcpy(a->service, value);
		}
		p = skip_ows(q);
		if (*p == ',')
			p = skip_ows(p + 1);
		else if (*p)
			break;
	}
	return 0;
}
