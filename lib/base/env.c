#include <fcntl.h>
#include <stdlib.h>

#include "base/env.h"
#include "base/parse.h"

const char *env_get(const char *name)
{
	const char *v = getenv(name);
	return (v && *v) ? v : NULL;
}

int env_fd(const char *name)
{
	const char *v = env_get(name);
	unsigned long long n;
	if (!v || parse_u64(v, &n) < 0 || n <= 2 || n > 1 << 20)
		return -1;
	if (fcntl((int)n, F_GETFD) < 0)
		return -1;
	return (int)n;
}
