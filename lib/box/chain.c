#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "box/chain.h"

/* Signals 1-64, one bit each: what a sigset_t holds on Linux. */
#define MASK_SIGNALS 64

static int valid_fd(long fd)
{
	return fd >= 3 && fd <= 0x7fffffff && fcntl((int)fd, F_GETFD) >= 0;
}

/* "-" or exactly 16 lower-case hex digits, then ','. NULL when malformed. */
static const char *read_mask(const char *v, struct chain_fds *c)
{
	if (v[0] == '-')
		return v[1] == ',' ? v + 1 : NULL;
	if (strspn(v, "0123456789abcdef") != 16 || v[16] != ',')
		return NULL;
	unsigned long long bits = strtoull(v, NULL, 16);
	sigemptyset(&c->caller_mask);
	for (int sig = 1; sig <= MASK_SIGNALS; sig++)
		if (bits >> (sig - 1) & 1)
			(void)sigaddset(&c->caller_mask, sig);
	c->has_caller_mask = 1;
	return v + 16;
}

void chain_read(struct chain_fds *c)
{
	const char *v = env_get(CHAIN_ENV);
	char *end;
	c->status_fd = c->report_fd = c->idm_fd = -1;
	c->has_caller_mask = 0;
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
	if (*end != ',' || !valid_fd(s) || !valid_fd(r) || (i != -1 && !valid_fd(i)))
		return;
	const char *rest = read_mask(end + 1, c);
	if (!rest)
		return;
	c->status_fd = (int)s;
	c->report_fd = (int)r;
	c->idm_fd = (int)i;
	snprintf(c->scratch, sizeof c->scratch, "%s", rest + 1);
}

int chain_export(int status_fd, int report_fd, int idm_fd, const sigset_t *caller_mask,
		 const char *scratch)
{
	char v[4200], mask[17] = "-";
	if (caller_mask) {
		unsigned long long bits = 0;
		for (int sig = 1; sig <= MASK_SIGNALS; sig++)
			if (sigismember(caller_mask, sig) == 1)
				bits |= 1ULL << (sig - 1);
		snprintf(mask, sizeof mask, "%016llx", bits);
	}
	snprintf(v, sizeof v, "%d,%d,%d,%s,%s", status_fd, report_fd, idm_fd, mask, scratch);
	return setenv(CHAIN_ENV, v, 1);
}
