/* Runs every registered case and prints TAP, so tests/run can count it
 * with the bats results. */
#include <stdlib.h>

#include "unit.h"

static struct unit_case *head, **tail = &head;
static int failed_here;

void unit_register(struct unit_case *c)
{
	*tail = c;
	tail = &c->next;
}

void unit_fail(const char *file, int line, const char *expr)
{
	printf("# %s:%d: CHECK(%s) failed\n", file, line, expr);
	failed_here = 1;
}

int main(int argc, char **argv)
{
	int n = 0, i = 0, bad = 0;
	for (struct unit_case *c = head; c; c = c->next)
		if (argc < 2 || strstr(c->name, argv[1]))
			n++;
	printf("1..%d\n", n);
	for (struct unit_case *c = head; c; c = c->next) {
		if (argc >= 2 && !strstr(c->name, argv[1]))
			continue;
		failed_here = 0;
		c->fn();
		printf("%s %d unit: %s\n", failed_here ? "not ok" : "ok", ++i, c->name);
		bad += failed_here;
	}
	return bad ? 1 : 0;
}
