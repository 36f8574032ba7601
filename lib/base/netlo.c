/* lo up, for PID 1 (isolation.md §2.6 step 27) and for the egress listener
 * that must be reachable before it: see netlo.h. */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/netlo.h"

int lo_up(const char **call)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		*call = "socket(AF_INET)";
		return -1;
	}
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	*call = "ioctl(SIOCGIFFLAGS, lo)";
	int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		*call = "ioctl(SIOCSIFFLAGS, lo)";
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	int e = errno;
	close(s);
	errno = e;
	return rc < 0 ? -1 : 0;
}
