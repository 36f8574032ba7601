#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "box/envfile.h"

int envfile_read(const char *path, struct strv *out, char *why, size_t len)
{
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (n + 65536 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *g = realloc(buf, cap + 1);
			if (!g)
				break;
			buf = g;
		}
		size_t want = cap - n, r = read_full(fd, buf + n, want);
		n += r;
		if (n > ENVFILE_MAX) {
			close(fd);
			free(buf);
			snprintf(why, len, "%s is larger than %d bytes", path, ENVFILE_MAX);
			return -1;
		}
		if (r < want)	/* end of file (or a read error) */
			break;
	}
	close(fd);
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return -1;
	}
	buf[n] = 0;
	if (memchr(buf, 0, n)) {
		free(buf);
		snprintf(why, len, "%s contains a NUL byte", path);
		return -1;
	}
	int lineno = 0, rc = 0;
	for (char *p = buf, *line; (line = strsep(&p, "\n"));) {
		lineno++;
		if (!p && !*line)
			break; /* the empty piece after the final LF */
		if (!*line || line[0] == '#')
			continue;
		char *eq = strchr(line, '=');
		if (!eq || eq == line) {
			snprintf(why, len, "%s line %d: %s", path, lineno,
				 eq ? "empty variable name" : "no '=' (expected KEY=VALUE)");
			rc = -1;
			break;
		}
		if (strv_push(out, line) < 0) {
			rc = -1;
			break;
		}
	}
	free(buf);
	return rc;
}

int env_defaults(struct strv *env, const char *hostname)
{
	char host[128];
	snprintf(host, sizeof host, "HOSTNAME=%s", hostname);
	if (env_put(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") < 0 ||
	    env_put(env, "HOME=/root") < 0 || env_put(env, "TERM=xterm") < 0 || env_put(env, host) < 0)
		return -1;
	return 0;
}
