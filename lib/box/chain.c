#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "box/chain.h"

void chain_read(struct chain_fds *c)
{
	const char *v = env_get(CHAIN_ENV);
	char *end;
	c->status_fd = c->report_fd = c->idm_fd = -1;
	c->scratch[0] = 0;
	if (!v)
		return;
	long s = strtol(v, &end, 10);
	if (*end != ',')
		return;
	long r = strtol(end + 1, &end, 10);
	if (*end != ',')
		return;
	long i = strtol(end + 1, &end, 10);
	if (*end != ',' || s < 3 || r < 3 || fcntl((int)s, F_GETFD) < 0 || fcntl((int)r, F_GETFD) < 0 ||
	    (i != -1 && (i < 3 || fcntl((int)i, F_GETFD) < 0)))
		return;
	c->status_fd = (int)s;
	c->report_fd = (int)r;
	c->idm_fd = (int)i;
	snprintf(c->scratch, sizeof c->scratch, "%s", end + 1);
}

int chain_export(int status_fd, int report_fd, int idm_fd, const char *scratch)
{
	char v[4200];
	snprintf(v, sizeof v, "%d,%d,%d,%s", status_fd, report_fd, idm_fd, scratch);
	return setenv(CHAIN_ENV, v, 1);
}
