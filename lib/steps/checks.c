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
