/* Registry mirrors (box-cli.md §2.8): KERN_REGISTRY_MIRRORS is a
 * comma-separated list of REGISTRY=URL; a mirror may use plain http only
 * on a loopback host. */
#ifndef KERN_MIRRORS_H
#define KERN_MIRRORS_H

#define MIRRORS_MAX 8

struct mirror {
	char base[512];		/* scheme://host[:port], no trailing slash */
	char host[256];		/* host[:port] */
};

/* The mirrors configured for registry (an API host such as
 * registry-1.docker.io), in order. Returns the count, or -1 after printing
 * the error line for a malformed list. */
int mirrors_for(const char *registry, struct mirror *out, int max);

#endif
