/* Placeholder until kern-egress lands: the proxy never starts, so a box
 * asking for egress gets no route (fail closed). */
#include <ctype.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "egress.h"

int egress_domain_valid(const char *d)
{
	size_t total = strlen(d), label = 0;
	int dots = 0;
	if (total == 0 || total > 253)
		return 0;
	for (size_t i = 0; i <= total; i++) {
		char c = d[i];
		if (c == '.' || c == 0) {
			if (label == 0 || d[i - 1] == '-')
				return 0;
			dots += c == '.';
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)c) && c != '-')
			return 0;
		if (label == 0 && c == '-')
			return 0;
		if (++label > 63)
			return 0;
	}
	return dots >= 1;
}

int egress_start(const struct egress_config *cfg, int *ctl)
{
	(void)cfg;
	*ctl = -1;
	warning("egress filter failed to start (kern-egress is not built yet); the box has NO outbound");
	return -1;
}

int egress_attach(int ctl)
{
	if (ctl >= 0)
		close(ctl);
	return -1;
}

void egress_stop(void)
{
}
