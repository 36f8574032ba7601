/* linux.sysctl (config-linux.md "Sysctl"): which keys a box can be given
 * and where they are written. Only keys of a namespace the box has of
 * its own: net.* (with its own network namespace), the IPC namespace's
 * kernel.shm*, kernel.msg*, kernel.sem and fs.mqueue.*. Any other key
 * would change the host for every box, and is refused naming it. */
#ifndef KERN_OCIRUNTIME_SYSCTL_H
#define KERN_OCIRUNTIME_SYSCTL_H

#include <stddef.h>

/* The namespace key belongs to (CLONE_NEWNET or CLONE_NEWIPC), or -1 with
 * why when it is malformed, not namespaced, or net.* without own_net.
 * path gets /proc/sys/... for it. */
int oci_sysctl_ns(const char *key, int own_net, char *path, size_t plen, char *why, size_t wl);

#endif
