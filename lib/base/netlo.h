/* The loopback interface of a box's own network namespace. */
#ifndef KERN_NETLO_H
#define KERN_NETLO_H

/* Bring lo up (IFF_UP | IFF_RUNNING) in the caller's network namespace.
 * Returns 0, or -1 with errno set and *call naming the call that failed
 * ("socket(AF_INET)", "ioctl(SIOCGIFFLAGS, lo)", "ioctl(SIOCSIFFLAGS, lo)"). */
int lo_up(const char **call);

#endif
