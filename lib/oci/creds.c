#include <errno.h>
#include <fcntl.h>
#include <mbedtls/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/xdg.h"
#include "oci/creds.h"

#define CREDS_MAX 65536

void creds_host(const char *registry, char *out, size_t len)
{
	if (strcmp(registry, "docker.io") == 0 || strcmp(registry, "index.docker.io") == 0)
		registry = "registry-1.docker.io";
	snprintf(out, len, "%s", registry);
}

/* Read the whole credentials file, refusing a symlink, another owner or
 * group/other access. Returns the byte count, 0 if absent, -1 refused. */
static ssize_t read_file(char *path, size_t plen, char *buf, size_t cap)
{
	char dir[4096];
	struct stat st;
	buf[0] = 0;
	if (kern_dir(KDIR_CONFIG, dir, sizeof dir, 0) < 0)
		return 0;
	snprintf(path, plen, "%s/credentials", dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		warning("ignoring the credentials file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		warning("ignoring the credentials file %s: it must be a regular file owned by you with mode 0600",
			path);
		close(fd);
		return -1;
	}
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

int creds_lookup(const char *host, char *out, size_t len)
{
	char path[4200];
	char *buf = malloc(CREDS_MAX);
	int found = 0;
	if (!buf)
		return -1;
	ssize_t n = read_file(path, sizeof path, buf, CREDS_MAX);
	if (n < 0) {
		free(buf);
		return -1;
	}
	size_t hl = strlen(host);
	for (char *line = buf, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		if (strncmp(line, host, hl) == 0 && line[hl] == '\t' && strlen(line + hl + 1) < len) {
			strcpy(out, line + hl + 1);
			found = 1;
		}
	}
	explicit_bzero(buf, CREDS_MAX);
	free(buf);
	return found;
}

int creds_store(const char *host, const char *user, const char *pass, const char **what,
		char *path, size_t plen)
{
	char dir[4096], tmp[4300];
	size_t ulen = strlen(user), plain_len = ulen + 1 + strlen(pass), b64len;
	char *plain = malloc(plain_len + 1), *old = malloc(CREDS_MAX);
	unsigned char *b64 = malloc(plain_len * 2 + 8);
	int rc = -1, fd = -1;

	*what = "allocate";
	if (!plain || !old || !b64)
		goto out;
	*what = "create the config directory";
	if (kern_dir(KDIR_CONFIG, dir, sizeof dir, 1) < 0)
		goto out;
	snprintf(plain, plain_len + 1, "%s:%s", user, pass);
	if (mbedtls_base64_encode(b64, plain_len * 2 + 8, &b64len, (unsigned char *)plain, plain_len))
		goto out;
	if (read_file(path, plen, old, CREDS_MAX) < 0)
		old[0] = 0;	/* an unusable file is replaced */
	snprintf(tmp, sizeof tmp, "%s/.credentials.%d", dir, (int)getpid());
	*what = "create";
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	*what = "write";
	size_t hl = strlen(host);
	for (char *line = old, *nl; *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		else
			nl = line + strlen(line);
		if (!*line || (strncmp(line, host, hl) == 0 && line[hl] == '\t'))
			continue;
		if (write_all(fd, line, strlen(line)) < 0 || write_all(fd, "\n", 1) < 0)
			goto out;
	}
	if (write_all(fd, host, hl) < 0 || write_all(fd, "\t", 1) < 0 ||
	    write_all(fd, b64, b64len) < 0 || write_all(fd, "\n", 1) < 0)
		goto out;
	*what = "fsync";
	if (fsync(fd) < 0)
		goto out;
	*what = "rename";
	if (rename(tmp, path) < 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
		if (rc < 0)
			unlink(tmp);
	}
	if (plain)
		explicit_bzero(plain, plain_len);
	if (b64)
		explicit_bzero(b64, plain_len * 2 + 8);
	if (old)
		explicit_bzero(old, CREDS_MAX);
	free(plain);
	free(b64);
	free(old);
	return rc;
}
