#include <string.h>

#include "base/proctitle.h"

static char *area;
static size_t area_len;

void proctitle_init(int argc, char **argv)
{
	if (argc < 1 || !argv[0])
		return;
	/* The kernel lays the strings out back to back; stop at the first
	 * one that is not where that layout puts it. */
	char *end = argv[0] + strlen(argv[0]) + 1;
	for (int i = 1; i < argc && argv[i] == end; i++)
		end += strlen(argv[i]) + 1;
	area = argv[0];
	area_len = (size_t)(end - area);
}

void proctitle_set(const char *title)
{
	size_t n = strlen(title);
	if (!area || area_len < n + 2)
		return;
	memset(area, 0, area_len);
	memcpy(area, title, n + 1);
	/* A last byte that is not NUL tells the kernel the area was rewritten
	 * (the setproctitle convention): /proc/PID/cmdline then ends at the
	 * first NUL, after the title, instead of listing every zeroed byte. */
	area[area_len - 1] = ' ';
}
