#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fdutil.h"
#include "box/logcap.h"

/* Copy in to the log until every writer is gone. Past the bound the file
 * moves to <file>.1 and a fresh one starts; a write that fails (disk full)
 * drops that chunk, never blocks the box. */
static void relay(int in, int dirfd, const char *file, int out)
{
	static char buf[65536];
	char old[300];
	struct stat st;
	uint64_t size = fstat(out, &st) == 0 ? (uint64_t)st.st_size : 0;
	snprintf(old, sizeof old, "%s.1", file);
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		if (size + (uint64_t)n > LOG_PART_MAX) {
			int fresh = -1;
			if (renameat(dirfd, file, dirfd, old) == 0)
				fresh = openat(dirfd, file, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
							    O_CLOEXEC, 0600);
			if (fresh >= 0) {
				close(out);
				out = fresh;
				size = 0;
			}
		}
		if (size + (uint64_t)n <= LOG_PART_MAX && write_all(out, buf, (size_t)n) == 0)
			size += (uint64_t)n;
	}
}

int log_relay_start(const char *dir, const char *file, const char **what)
{
	int p[2], st, e;
	*what = "open";
	int dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int out = dirfd < 0 ? -1 : openat(dirfd, file, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
								  O_CLOEXEC, 0600);
	if (out < 0)
		goto fail;
	*what = "pipe";
	if (pipe2(p, O_CLOEXEC) < 0)
		goto fail;
	*what = "fork";
	pid_t mid = fork();
	if (mid < 0) {
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if (mid == 0) {
		/* The relay is the grandchild: nobody of kern's waits for it, and
		 * the supervisor's reaping never sees it. */
		pid_t r = fork();
		if (r != 0)
			_exit(r < 0);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(1);
		const int keep[] = {p[0], dirfd, out};
		close_fds_except(keep, 3);
		(void)prctl(PR_SET_NAME, "kern-log", 0, 0, 0);
		relay(p[0], dirfd, file, out);
		_exit(0);
	}
	while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
		;
	close(p[0]);
	close(out);
	close(dirfd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		/* No relay: the read end is gone with the middle child. */
		close(p[1]);
		errno = EAGAIN;
		return -1;
	}
	return p[1];
fail:
	e = errno;
	if (out >= 0)
		close(out);
	if (dirfd >= 0)
		close(dirfd);
	errno = e;
	return -1;
}
