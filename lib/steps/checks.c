/* Value checks the step tables share. */
#include <string.h>

#include "state/records.h"
#include "steps/checks.h"

int check_box_name(const char *v, const char **why)
{
	if (box_name_valid(v))
		return 0;
	*why = "expected [A-Za-z0-9][A-Za-z0-9_.-]*, 1-64 bytes";
	return -1;
}

int check_abs(const char *v, const char **why)
{
	if (v[0] == '/')
		return 0;
	*why = "not an absolute path";
	return -1;
}

int check_kv(const char *v, const char **why)
{
	if (strchr(v, '=') && v[0] != '=')
		return 0;
	*why = "expected KEY=VALUE";
	return -1;
}

/* The cgroupfs form of an OCI linux.cgroupsPath: "/a/b" or "a/b", each
 * component a plain name ([A-Za-z0-9_.@+-], not "." or ".."), at most 16
 * of them and 512 bytes in all; no "//", no trailing "/". The systemd
 * form (slice:prefix:name) holds ':' and is not this. */
int check_cgroup_path(const char *v, const char **why)
{
	size_t n = strlen(v), comp = 0, depth = 0;
	*why = "expected a cgroupfs path /a/b of names [A-Za-z0-9_.@+-] (no '.', '..' or empty "
	       "components; at most 16 of them, 512 bytes)";
	if (v[0] == '/')
		v++, n--;
	if (n == 0 || n > 512)
		return -1;
	for (size_t i = 0; i <= n; i++) {
		char c = v[i];
		if (c == '/' || c == 0) {
			if (comp == 0 || (comp == 1 && v[i - 1] == '.') ||
			    (comp == 2 && v[i - 1] == '.' && v[i - 2] == '.') || ++depth > 16)
				return -1;
			comp = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '@' || c == '+' || c == '-'))
			return -1;
		comp++;
	}
	return 0;
}
