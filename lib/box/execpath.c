#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "box/execpath.h"

int exec_box_path(char **argv, char buf[PATH_MAX])
{
	const char *file = argv[0];
	if (!*file)
		return ENOENT;
	if (strchr(file, '/')) {
		execv(file, argv);
		return errno;
	}
	size_t flen = strlen(file);
	if (flen > NAME_MAX)
		return ENAMETOOLONG;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	int seen_eacces = 0, err = ENOENT;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);
		/* An empty entry is the working directory, as in both libcs. */
		if (dlen + 1 + flen < PATH_MAX) {
			memcpy(buf, p, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + (dlen > 0), file, flen + 1);
			execv(buf, argv);
			err = errno;
			if (err == EACCES)
				seen_eacces = 1;
			else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV && err != ETIMEDOUT)
				return err;
		}
		p = end;
		if (!*p)
			break;
	}
	return seen_eacces ? EACCES : err;
}
