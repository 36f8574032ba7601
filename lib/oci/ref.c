#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "image/image.h"
#include "oci/digest.h"
#include "oci/ref.h"

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)* */
static int repo_component_ok(const char *s, size_t n)
{
	size_t i = 0;
	if (n == 0 || !is_lower_alnum(s[0]))
		return 0;
	while (i < n) {
		while (i < n && is_lower_alnum(s[i]))
			i++;
		if (i == n)
			return 1;
		size_t sep = i;
		if (s[i] == '.') {
			i++;
		} else if (s[i] == '_') {
			i++;
			if (i < n && s[i] == '_')
				i++;
		} else if (s[i] == '-') {
			while (i < n && s[i] == '-')
				i++;
		} else {
			return 0;
		}
		if (i == sep || i == n || !is_lower_alnum(s[i]))
			return 0;
	}
	return 1;
}

/* [A-Za-z0-9_][A-Za-z0-9._-]{0,127} */
static int tag_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 128 || !(isalnum((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* host[:port] where host is LDH labels or a bracketed IPv6 literal. */
static int registry_ok(const char *s, size_t n)
{
	size_t i = 0;
	if (n == 0)
		return 0;
	if (s[0] == '[') {
		while (i < n && s[i] != ']')
			i++;
		if (i == n || i < 3)
			return 0;
		for (size_t k = 1; k < i; k++)
			if (!(isxdigit((unsigned char)s[k]) || s[k] == ':' || s[k] == '.'))
				return 0;
		i++;
	} else {
		size_t label = 0;
		while (i < n && s[i] != ':') {
			char c = s[i];
			if (c == '.') {
				if (label == 0)
					return 0;
				label = 0;
			} else if (isalnum((unsigned char)c) || c == '-') {
				label++;
			} else {
				return 0;
			}
			i++;
		}
		if (label == 0)
			return 0;
	}
	if (i == n)
		return 1;
	if (s[i] != ':' || i + 1 == n || n - i - 1 > 5)
		return 0;
	unsigned port = 0;
	for (size_t k = i + 1; k < n; k++) {
		if (!isdigit((unsigned char)s[k]))
			return 0;
		port = port * 10 + (unsigned)(s[k] - '0');
	}
	return port >= 1 && port <= 65535;
}

int host_is_loopback(const char *hp)
{
	char host[REF_MAX + 1];
	size_t n = strlen(hp);
	if (n > REF_MAX)
		return 0;
	if (hp[0] == '[') {
		const char *e = strchr(hp, ']');
		if (!e)
			return 0;
		return (size_t)(e - hp) == 4 && strncmp(hp, "[::1]", 5) == 0 &&
		       (e[1] == 0 || e[1] == ':');
	}
	memcpy(host, hp, n + 1);
	char *c = strchr(host, ':');
	if (c)
		*c = 0;
	if (strcasecmp(host, "localhost") == 0)
		return 1;
	/* 127.0.0.0/8 as a dotted quad of 1-3 digit decimal octets. */
	unsigned oct[4];
	const char *p = host;
	for (int i = 0; i < 4; i++) {
		int digits = 0;
		oct[i] = 0;
		while (isdigit((unsigned char)*p) && digits < 4) {
			oct[i] = oct[i] * 10 + (unsigned)(*p++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3 || oct[i] > 255 || *p != (i < 3 ? '.' : 0))
			return 0;
		if (i < 3)
			p++;
	}
	return oct[0] == 127;
}

int image_ref_parse(const char *ref, struct image_ref *r, const char **why)
{
	char name[REF_MAX + 1];
	const char *at, *tag = NULL, *seg, *first_end;
	size_t n;

	memset(r, 0, sizeof *r);
	if (!ref || !*ref)
		return *why = "empty reference", -1;
	n = strlen(ref);
	if (n > REF_MAX)
		return *why = "longer than 255 bytes", -1;
	for (const char *p = ref; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c <= 0x20 || c >= 0x7f)
			return *why = "contains whitespace, control or non-ASCII characters", -1;
	}
	if (ref[0] == '/')
		return *why = "starts with '/'", -1;
	at = strchr(ref, '@');
	if (at && strchr(at + 1, '@'))
		return *why = "more than one '@'", -1;
	if (at) {
		if (!digest_valid(at + 1))
			return *why = "the digest is not sha256: plus 64 lowercase hex", -1;
		strcpy(r->reference, at + 1);
		r->is_digest = 1;
		n = (size_t)(at - ref);
	}
	memcpy(name, ref, n);
	name[n] = 0;
	char *c = strrchr(name, ':');
	if (c && !strchr(c, '/')) {
		*c = 0;
		tag = c + 1;
		if (!tag_ok(tag))
			return *why = "the tag is not [A-Za-z0-9_][A-Za-z0-9._-]{0,127}", -1;
		if (!r->is_digest)
			strcpy(r->reference, tag);
	} else if (!r->is_digest) {
		strcpy(r->reference, "latest");
	}
	if (!*name)
		return *why = "no repository name", -1;

	/* Path segments: no empty, '.' or '..' segment anywhere. */
	seg = name;
	for (;;) {
		const char *e = strchr(seg, '/');
		size_t len = e ? (size_t)(e - seg) : strlen(seg);
		if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return *why = "a path segment is empty, '.' or '..'", -1;
		if (!e)
			break;
		seg = e + 1;
	}

	first_end = strchr(name, '/');
	const char *repo = name;
	if (first_end) {
		size_t flen = (size_t)(first_end - name);
		int is_reg = memchr(name, '.', flen) || memchr(name, ':', flen) ||
			     (flen == 9 && strncmp(name, "localhost", 9) == 0);
		if (is_reg) {
			if (!registry_ok(name, flen))
				return *why = "the registry is not host[:port]", -1;
			memcpy(r->registry, name, flen);
			r->registry[flen] = 0;
			repo = first_end + 1;
		}
	}
	/* Past the tag, a colon may only be the registry's port. */
	if (strchr(repo, ':'))
		return *why = "more colons than one port and one tag allow", -1;
	if (!*r->registry)
		strcpy(r->registry, "registry-1.docker.io");
	if (strcmp(r->registry, "docker.io") == 0 || strcmp(r->registry, "index.docker.io") == 0)
		strcpy(r->registry, "registry-1.docker.io");

	seg = repo;
	for (;;) {
		const char *e = strchr(seg, '/');
		size_t len = e ? (size_t)(e - seg) : strlen(seg);
		if (!repo_component_ok(seg, len))
			return *why = "a repository component is not [a-z0-9]+((.|_|__|-+)[a-z0-9]+)*", -1;
		if (!e)
			break;
		seg = e + 1;
	}
	if (strcmp(r->registry, "registry-1.docker.io") == 0 && !strchr(repo, '/'))
		if (strlen(repo) + 8 > REF_MAX)
			return *why = "longer than 255 bytes", -1;
		else
			snprintf(r->repo, sizeof r->repo, "library/%.247s", repo);
	else
		snprintf(r->repo, sizeof r->repo, "%s", repo);
	r->loopback = host_is_loopback(r->registry);
	return 0;
}

void image_ref_canonical(const struct image_ref *r, char *out, size_t len)
{
	const char *reg = strcmp(r->registry, "registry-1.docker.io") == 0 ? "docker.io" : r->registry;
	snprintf(out, len, "%s/%s%s%s", reg, r->repo, r->is_digest ? "@" : ":", r->reference);
}

void image_ref_base(const struct image_ref *r, char *out, size_t len)
{
	snprintf(out, len, "%s://%s", r->loopback ? "http" : "https", r->registry);
}

int url_host(const char *url, char *out, size_t len, int *https)
{
	const char *p;
	if (strncasecmp(url, "https://", 8) == 0) {
		*https = 1;
		p = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		*https = 0;
		p = url + 7;
	} else {
		return -1;
	}
	size_t auth_len = strcspn(p, "/?#");
	/* userinfo ends at the last '@' of the authority */
	const char *at = NULL;
	for (size_t i = 0; i < auth_len; i++)
		if (p[i] == '@')
			at = p + i;
	const char *h = at ? at + 1 : p;
	size_t hl = auth_len - (size_t)(h - p);
	if (hl > 0 && h[0] == '[') {
		const char *e = memchr(h, ']', hl);
		if (!e)
			return -1;
		hl = (size_t)(e - h) + 1;
	} else {
		const char *colon = memchr(h, ':', hl);
		if (colon)
			hl = (size_t)(colon - h);
	}
	if (hl == 0 || hl >= len)
		return -1;
	for (size_t i = 0; i < hl; i++)
		out[i] = (char)tolower((unsigned char)h[i]);
	out[hl] = 0;
	return 0;
}

const char *host_arch(void)
{
	struct utsname u;
	if (uname(&u) == 0 && (strcmp(u.machine, "aarch64") == 0 || strcmp(u.machine, "arm64") == 0))
		return "arm64";
	return "amd64";
}

int image_platform(const char *s, char *arch, size_t len)
{
	static const char *const known[] = {"amd64", "arm64", "386", "arm", "ppc64le", "s390x",
					    "riscv64", "mips64le", NULL};
	const char *a = s, *slash = strchr(s, '/');
	if (slash) {
		if ((size_t)(slash - s) != 5 || strncmp(s, "linux", 5) != 0)
			return -1;
		a = slash + 1;
	}
	if (strcmp(a, "x86_64") == 0 || strcmp(a, "x86-64") == 0)
		a = "amd64";
	else if (strcmp(a, "aarch64") == 0 || strcmp(a, "arm64v8") == 0)
		a = "arm64";
	for (int i = 0; known[i]; i++)
		if (strcmp(a, known[i]) == 0) {
			if (strlen(a) >= len)
				return -1;
			strcpy(arch, a);
			return 0;
		}
	return -1;
}
