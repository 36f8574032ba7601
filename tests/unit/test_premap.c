/* premap (lib/base/premap.c): the stack pages kept out of a clone are the
 * caller's alone, and nothing a caller's frame holds is among them, however
 * the compiler lays that frame out. */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/premap.h"
#include "unit.h"

#define CHILD_STACK (64 << 10)
#define FILL 0x5a
#define LOCALS (3 * 4096)
#define MAGIC 0x6b65726eu

struct frame_view {
	unsigned magic;
	const unsigned char *bytes;
	size_t len;
};

/* The child reads the whole of the caller's local through the pointer it
 * was given, as PID 1 reads its start arguments. */
static int child_reads(void *arg)
{
	const struct frame_view *v = arg;
	/* A view wiped to zeros would read as an empty one. */
	if (v->magic != MAGIC || v->len != LOCALS || !v->bytes)
		_exit(2);
	for (size_t i = 0; i < v->len; i++)
		if (v->bytes[i] != FILL)
			_exit(1);
	_exit(0);
}

/* Three pages of locals in the clone's own frame, as supervise.c's
 * caller holds PID 1's arguments: all of them must reach the child. */
static __attribute__((noinline)) int clone_reading_own_frame(void)
{
	unsigned char locals[LOCALS];
	memset(locals, FILL, sizeof locals);
	struct frame_view v = {MAGIC, locals, sizeof locals};
	char *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	premap_stack_unshare();
	pid_t pid = clone(child_reads, stack + CHILD_STACK, SIGCHLD, &v);
	premap_stack_share();
	int status = 0;
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	munmap(stack, CHILD_STACK);
	if (pid < 0 || status < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(premap_stack_unshare_keeps_the_callers_frames_in_the_clone)
{
	/* Mapping ahead on, whatever this machine's faults cost: the test
	 * build's hook, read once per process. */
	setenv("KERN_TEST_PREMAP", "1", 1);
	CHECK(premap_pays() == 1);
	premap_stack();
	for (int i = 0; i < 3; i++)
		CHECK(clone_reading_own_frame() == 0);
	/* Not for the commands later tests run. */
	unsetenv("KERN_TEST_PREMAP");
}
