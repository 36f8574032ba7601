#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "cgroup/io.h"

/* The whole of s in one write(2) (the kernel parses each write on its
 * own). Returns 0, or -1 with errno (EIO when it took less). */
static int put_value(int fd, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;
	do
		w = write(fd, s, n);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -1;
	if ((size_t)w != n) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int cg_write(int dirfd, const char *file, const char *s)
{
	int fd = openat(dirfd, file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = put_value(fd, s), saved = errno;
	close(fd);
	errno = saved;
	return r;
}

/* One read of a single-record file from offset 0, trailing newlines cut. */
static long read_whole(int fd, char *buf, size_t len)
{
	ssize_t r;
	do
		r = pread(fd, buf, len - 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	buf[r] = 0;
	while (r > 0 && buf[r - 1] == '\n')
		buf[--r] = 0;
	return (long)r;
}

int cg_write_read(int dirfd, const char *file, const char *s, char *buf, size_t len)
{
	int fd = openat(dirfd, file, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = put_value(fd, s), saved = errno;
	if (r == 0 && read_whole(fd, buf, len) < 0)
		buf[0] = 0;
	close(fd);
	errno = saved;
	return r;
}

/* whole: the file is one record (a value, or the lines of one keyed
 * file): the kernel hands all of it to the first read that has room, so a
 * short read is its end. Files listing many records (cgroup.procs) can
 * come in several short reads and are read until end of file. */
static long read_file(int dirfd, const char *file, char *buf, size_t len, int whole)
{
	int fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	if (fd < 0)
		return -1;
	while (got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (whole && got + 1 < len)
			break;
	}
	close(fd);
	buf[got] = 0;
	while (got > 0 && buf[got - 1] == '\n')
		buf[--got] = 0;
	return (long)got;
}

long cg_read(int dirfd, const char *file, char *buf, size_t len)
{
	return read_file(dirfd, file, buf, len, 0);
}

/* v1 reports "unlimited" as the largest page-aligned value below 2^63;
 * anything from 2^62 up is no limit in practice. */
static int number_or_max(const char *s, uint64_t *v)
{
	unsigned long long n;
	if (strcmp(s, "max") == 0 || strcmp(s, "-1") == 0) {
		*v = CG_UNLIMITED;
		return 0;
	}
	if (parse_u64(s, &n) < 0) {
		errno = EINVAL;
		return -1;
	}
	*v = n >= (1ULL << 62) ? CG_UNLIMITED : n;
	return 0;
}

int cg_parse_u64(const char *s, uint64_t *v)
{
	return number_or_max(s, v);
}

int cg_read_u64(int dirfd, const char *file, uint64_t *v)
{
	char buf[64];
	if (read_file(dirfd, file, buf, sizeof buf, 1) < 0)
		return -1;
	return number_or_max(buf, v);
}

int cg_read_key(int dirfd, const char *file, const char *key, uint64_t *v)
{
	char buf[4096];
	if (read_file(dirfd, file, buf, sizeof buf, 1) < 0)
		return -1;
	return cg_parse_key(buf, key, v);
}

int cg_parse_key(char *buf, const char *key, uint64_t *v)
{
	size_t kn = strlen(key);
	for (char *l = buf; *l;) {
		char *e = strchrnul(l, '\n');
		char save = *e;
		*e = 0;
		if (strncmp(l, key, kn) == 0 && l[kn] == ' ')
			return number_or_max(l + kn + 1, v);
		*e = save;
		l = *e ? e + 1 : e;
	}
	errno = ENOENT;
	return -1;
}

int cg_has(int dirfd, const char *file)
{
	return faccessat(dirfd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int cg_word_in(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = s; *p;) {
		while (*p == ' ' || *p == '\n')
			p++;
		const char *e = p + strcspn(p, " \n");
		if ((size_t)(e - p) == n && strncmp(p, w, n) == 0)
			return 1;
		p = e;
	}
	return 0;
}
