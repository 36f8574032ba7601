#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fdutil.h"

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int close_range_sys(unsigned lo, unsigned hi)
{
	return (int)syscall(SYS_close_range, lo, hi, 0);
}

void close_fds_except(const int *keep, int nkeep)
{
	int k[16] = {0}, n = 0;
	for (int i = 0; i < nkeep && n < 16; i++)
		if (keep[i] >= 3)
			k[n++] = keep[i];
	qsort(k, (size_t)n, sizeof k[0], cmp_int);
	unsigned lo = 3;
	int ok = 1;
	for (int i = 0; i <= n && ok; i++) {
		unsigned hi = i < n ? (unsigned)k[i] - 1 : ~0U;
		if (i < n && (unsigned)k[i] < lo)
			continue;
		if (hi >= lo && close_range_sys(lo, hi) < 0)
			ok = 0;
		if (i < n)
			lo = (unsigned)k[i] + 1;
	}
	if (ok)
		return;
	/* No close_range (kernel < 5.9): walk our own descriptor table. */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		int fd = (int)strtol(e->d_name, NULL, 10);
		int kept = fd < 3 || fd == dfd;
		for (int i = 0; i < n; i++)
			kept |= fd == k[i];
		if (!kept)
			close(fd);
	}
	closedir(d);
}

int set_cloexec(int fd, int on)
{
	int fl = fcntl(fd, F_GETFD);
	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFD, on ? fl | FD_CLOEXEC : fl & ~FD_CLOEXEC);
}

long read_small_file(const char *path, char *buf, size_t len)
{
	if (len < 2)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return (long)n;
}

size_t read_full(int fd, char *buf, size_t len)
{
	size_t n = 0;
	while (n < len) {
		ssize_t r = read(fd, buf + n, len - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	return n;
}

char *read_regular_fd(int fd, size_t max, uid_t owner, int err, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int saved = err;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= max &&
	    (owner == (uid_t)-1 || st.st_uid == owner)) {
		buf = malloc((size_t)st.st_size + 1);
		saved = ENOMEM;
	}
	if (buf) {
		*len = read_full(fd, buf, (size_t)st.st_size);
		buf[*len] = 0;
	}
	close(fd);
	if (!buf)
		errno = saved;
	return buf;
}

int write_small_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

int peer_closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

int send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * FDS_MAX)];
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds < 0 || nfds > FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		memset(cbuf, 0, sizeof cbuf);
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	ssize_t n;
	long waited = 0, pause = 1;
	while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != ETOOMANYREFS || waited >= FDS_INFLIGHT_WAIT_MS)
			break;
		sleep_ms(pause);
		waited += pause;
		pause = pause < 32 ? pause * 2 : 32;
	}
	return n == (ssize_t)len ? 0 : -1;
}

const char *send_fds_error(int err)
{
	static char why[200];
	struct rlimit rl;
	if (err == ETOOMANYREFS && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		snprintf(why, sizeof why,
			 "sendmsg: this user's descriptors in flight stayed over its open-file limit (ulimit -n %llu) "
			 "for %d s (too many boxes starting at once for that limit)",
			 (unsigned long long)rl.rlim_cur, FDS_INFLIGHT_WAIT_MS / 1000);
	else
		snprintf(why, sizeof why, "sendmsg: %s", strerror(err));
	return why;
}

long recv_fds(int sock, void *buf, size_t len, int *fds, int max, int *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * FDS_MAX)];
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof cbuf};
	ssize_t n;
	*nfds = 0;
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -1;
	/* Every descriptor that arrived is either handed out or closed: a
	 * message with more than max, or of another kind, leaks nothing. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (*nfds < max)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return (long)n;
}

/* One static buffer: not reentrant (see fdutil.h). */
int each_line(const char *path, void (*fn)(char *line, void *ctx), void *ctx, int max_lines)
{
	static char buf[32768];
	int lines = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* One read() is one pass of the kernel over the mount table. */
	size_t got = read_full(fd, buf, sizeof buf - 1);
	if (got < sizeof buf - 1) {
		char *end = buf + got;
		close(fd);
		*end = 0;
		for (char *l = buf; l < end && lines++ < max_lines;) {
			char *e = memchr(l, '\n', (size_t)(end - l));
			if (!e)
				e = end;
			*e = 0;
			fn(l, ctx);
			l = e + 1;
		}
		return 0;
	}
	/* Too large for the buffer: stdio, from the start. */
	FILE *f = fdopen(fd, "r");
	char *line = NULL;
	size_t cap = 0;
	if (!f) {
		close(fd);
		return -1;
	}
	rewind(f);
	while (getline(&line, &cap, f) > 0 && lines++ < max_lines) {
		line[strcspn(line, "\n")] = 0;
		fn(line, ctx);
	}
	free(line);
	fclose(f);
	return 0;
}
