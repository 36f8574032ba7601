#ifdef KERN_TEST_BUILD
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/testhook.h"

void test_phase(const char *phase)
{
	const char *want = getenv("KERN_TEST_PAUSE");
	char line[128];
	if (!want || strcmp(want, phase) != 0)
		return;
	snprintf(line, sizeof line, "kern-test: paused at %s\n", phase);
	(void)write_all(2, line, strlen(line));
	/* KERN_TEST_RESUME=<file>: go on once the file exists, so a test can
	 * change the world at exactly this point (a race made certain). */
	const char *resume = getenv("KERN_TEST_RESUME");
	for (;;) {
		if (resume && access(resume, F_OK) == 0)
			return;
		if (resume)
			usleep(10000);
		else
			pause();
	}
}

int test_flag(const char *name)
{
	return getenv(name) != NULL;
}
#else
/* The release build has no hooks (this unit is empty on purpose). */
typedef int kern_testhook_unused;
#endif
