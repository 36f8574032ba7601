#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "box/chain.h"
#include "unit.h"

/* KERN_PID1 as kern-wait writes it reads back whole; the caller's mask
 * keeps exactly its signals, 1 and 63 included. */
TEST(chain_round_trip)
{
	int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
	sigset_t mask;
	struct chain_fds c;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, 63);
	CHECK(chain_export(a, b, -1, &mask, "/run/x,with,commas") == 0);
	chain_read(&c);
	CHECK(c.status_fd == a && c.report_fd == b && c.idm_fd == -1);
	CHECK_STR(c.scratch, "/run/x,with,commas");
	CHECK(c.has_caller_mask);
	for (int sig = 1; sig < 64; sig++)
		if (sig < 32 || sig > 34)
			CHECK(sigismember(&c.caller_mask, sig) == sigismember(&mask, sig));
	CHECK(chain_export(a, b, -1, NULL, "/s") == 0);
	chain_read(&c);
	CHECK(c.status_fd == a && !c.has_caller_mask);
	CHECK_STR(c.scratch, "/s");
	close(a);
	close(b);
	unsetenv(CHAIN_ENV);
}

/* A malformed variable (a standalone run with whatever the caller set)
 * gives nothing at all, never a half-read mask or descriptors. Each case
 * is a format given the two open descriptors (extra arguments are
 * ignored). */
TEST(chain_malformed_is_absent)
{
	static const char *const bad[] = {
		"",
		"%d,%d,-1,/s",				/* no mask field */
		"%d,%d,-1,12,/s",			/* mask too short */
		"%d,%d,-1,00000000000000001,/s",	/* too long */
		"%d,%d,-1,000000000000000G,/s",		/* not hex */
		"%d,%d,-1,000000000000000A,/s",		/* upper case */
		"1,2,-1,-,/s",				/* stdio is never the chain's */
		"99999,%d,-1,-,/s",			/* not open */
		"%d,%d,7777,-,/s",
	};
	struct chain_fds c;
	char v[128];
	int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(v, sizeof v, bad[i], a, b);
		setenv(CHAIN_ENV, v, 1);
		chain_read(&c);
		CHECK(c.status_fd == -1 && c.report_fd == -1 && c.idm_fd == -1 && !c.has_caller_mask);
		CHECK_STR(c.scratch, "");
	}
	snprintf(v, sizeof v, "%d,%d,-1,-,/s", a, b);
	setenv(CHAIN_ENV, v, 1);
	chain_read(&c);
	CHECK(c.status_fd == a && c.report_fd == b && !c.has_caller_mask);
	close(a);
	close(b);
	unsetenv(CHAIN_ENV);
}
