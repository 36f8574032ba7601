/* linux.sysctl keys (sysctl.h). A key is hostile: only [a-z0-9_-]
 * components joined by '.', so it names one file under /proc/sys and
 * nothing else ('/', '..', empty components refused). */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ociruntime/sysctl.h"

static int prefixed(const char *key, const char *p)
{
	return !strncmp(key, p, strlen(p));
}

int oci_sysctl_ns(const char *key, int own_net, char *path, size_t plen, char *why, size_t wl)
{
	static const char *const ipc[] = {"kernel.shmmax", "kernel.shmall", "kernel.shmmni", "kernel.shm_rmid_forced",
					  "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem", NULL};
	size_t n = strlen(key);
	if (n == 0 || n > 200 || key[0] == '.' || key[n - 1] == '.' || strstr(key, "..")) {
		snprintf(why, wl, "linux.sysctl: '%.200s' is not a sysctl name", key);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') || key[i] == '_' ||
		      key[i] == '-' || key[i] == '.')) {
			snprintf(why, wl, "linux.sysctl: '%s' is not a sysctl name (a-z, 0-9, _, - and .)", key);
			return -1;
		}
	int ns = -1;
	if (prefixed(key, "net."))
		ns = CLONE_NEWNET;
	else if (prefixed(key, "fs.mqueue."))
		ns = CLONE_NEWIPC;
	for (int i = 0; ipc[i] && ns < 0; i++)
		if (!strcmp(key, ipc[i]))
			ns = CLONE_NEWIPC;
	if (ns < 0) {
		snprintf(why, wl, "linux.sysctl.%s is not supported: only keys of the box's own namespaces "
			 "(net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*) can be set", key);
		return -1;
	}
	if (ns == CLONE_NEWNET && !own_net) {
		snprintf(why, wl, "linux.sysctl.%s needs a 'network' entry in linux.namespaces (the host's "
			 "network is shared otherwise)", key);
		return -1;
	}
	snprintf(path, plen, "/proc/sys/%s", key);
	for (char *s = path + 10; *s; s++)
		if (*s == '.')
			*s = '/';
	return ns;
}
