/* Test-only phase hooks (security-tests.md fixtures): in the test build
 * (KERN_TEST_BUILD), KERN_TEST_PAUSE=<phase> makes kern print
 * `kern-test: paused at <phase>` on stderr and stop there until killed, so
 * a test can SIGKILL the supervisor at that exact point; with
 * KERN_TEST_RESUME=<file> it goes on once that file exists. Release builds
 * compile the hook to nothing and ignore the variable. */
#ifndef KERN_TESTHOOK_H
#define KERN_TESTHOOK_H

#ifdef KERN_TEST_BUILD
void test_phase(const char *phase);
/* 1 when the environment variable `name` is set (to anything): a test
 * asks the test build to take a path the host would not take, such as
 * the fallback for a kernel without the new mount API. */
int test_flag(const char *name);
#else
static inline void test_phase(const char *phase)
{
	(void)phase;
}
static inline int test_flag(const char *name)
{
	(void)name;
	return 0;
}
#endif

#endif
