#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/diag.h"
#include "oci/progress.h"

static struct {
	int on, nlayers, drawn;
	long long start_ms, last_ms;
	uint64_t before;	/* bytes of earlier layers, for the rate */
	int layer;
} p;

void progress_begin(int nlayers)
{
	memset(&p, 0, sizeof p);
	p.on = !diag_quiet && isatty(2);
	p.nlayers = nlayers;
	p.start_ms = now_ms();
}

static void mib(char *out, size_t len, uint64_t b)
{
	snprintf(out, len, "%.1f MiB", (double)b / 1048576.0);
}

void progress_update(int layer, uint64_t done, uint64_t total)
{
	char line[200], a[32], t[32], r[32];
	if (!p.on)
		return;
	long long now = now_ms();
	if (now - p.last_ms < 100 && !(total && done == total))
		return;
	p.last_ms = now;
	double secs = (double)(now - p.start_ms) / 1000.0;
	mib(a, sizeof a, done);
	mib(t, sizeof t, total);
	mib(r, sizeof r, secs > 0 ? (uint64_t)((double)(p.before + done) / secs) : 0);
	int n = snprintf(line, sizeof line, "\rpulling layer %d/%d: %s%s%s, %s/s\033[K", layer + 1,
			 p.nlayers, a, total ? " of " : "", total ? t : "", r);
	if (n > 0)
		(void)write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	p.drawn = 1;
	if (total && done == total)
		p.before += done;
}

void progress_end(void)
{
	if (p.on && p.drawn)
		(void)write_all(2, "\r\033[K", 4);
	p.drawn = 0;
}
