/* A config's linux.seccomp profile compiled by libseccomp into a classic
 * BPF program for this machine's architecture, which kern loads in
 * addition to its own prebuilt filter (both apply: the stricter verdict
 * wins). */
#ifndef KERN_OCIRUNTIME_SECCOMP_H
#define KERN_OCIRUNTIME_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>

#define OCI_SECCOMP_MAX_INSNS 4096	/* the kernel's BPF_MAXINSNS */

/* js[0..len): the linux.seccomp object as config.json holds it. On
 * success *prog (malloc'd) holds *n instructions; -1 with one line in why
 * naming the field kern cannot honour. */
int oci_seccomp_compile(const char *js, size_t len, struct sock_filter **prog, unsigned *n, char *why,
			size_t wl);

#endif
