#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/fdutil.h"
#include "base/idmap.h"

int idmap_read_fd(int fd, struct id_range *out, int max)
{
	/* 340 lines of three 10-digit numbers fit, with room to spare. */
	char buf[12288];
	buf[read_full(fd, buf, sizeof buf - 1)] = 0;
	int n = 0;
	for (char *p = buf, *end; *p && n < max;) {
		unsigned long v[3];
		int k = 0;
		for (; k < 3; k++, p = end) {
			v[k] = strtoul(p, &end, 10);
			if (end == p)
				break;
		}
		if (k < 3)
			break;
		out[n++] = (struct id_range){.inside = v[0], .outside = v[1], .count = v[2]};
	}
	return n;
}

int idmap_read(const char *path, struct id_range *out, int max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = idmap_read_fd(fd, out, max);
	close(fd);
	return n;
}

int idmap_is_initial(const struct id_range *r, int n)
{
	return n == 1 && r[0].inside == 0 && r[0].outside == 0 && r[0].count == 4294967295UL;
}
