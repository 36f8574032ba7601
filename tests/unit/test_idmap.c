/* base/idmap: id maps as the kernel prints them (right-aligned columns),
 * the initial namespace's identity map, a map that stops being numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/idmap.h"
#include "unit.h"

static int map_of(const char *text, struct id_range *r, int max)
{
	char path[] = "/tmp/kern-unit-idmap-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	int n = idmap_read(path, r, max);
	unlink(path);
	return n;
}

TEST(idmap_reads_the_kernels_columns)
{
	struct id_range r[IDMAP_MAX];
	int n = map_of("         0       1000          1\n         1     100000      65536\n", r, IDMAP_MAX);
	CHECK(n == 2);
	CHECK(r[0].inside == 0 && r[0].outside == 1000 && r[0].count == 1);
	CHECK(r[1].inside == 1 && r[1].outside == 100000 && r[1].count == 65536);
	CHECK(!idmap_is_initial(r, n));
	CHECK(map_of("         0       1000          1\n         1     100000      65536\n", r, 1) == 1);
}

TEST(idmap_initial_namespace_is_one_identity_range)
{
	struct id_range r[2];
	int n = map_of("         0          0 4294967295\n", r, 2);
	CHECK(n == 1 && idmap_is_initial(r, n));
	CHECK(!idmap_is_initial(r, -1));
	CHECK(map_of("         0          0 4294967294\n", r, 2) == 1 && !idmap_is_initial(r, 1));
}

TEST(idmap_stops_at_a_line_that_is_not_three_numbers)
{
	struct id_range r[4];
	CHECK(map_of("0 0 1\n5 x 1\n7 7 1\n", r, 4) == 1);
	CHECK(map_of("", r, 4) == 0);
	CHECK(idmap_read("/nonexistent/kern-unit-idmap", r, 4) == -1);
}
