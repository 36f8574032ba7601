/* A parsed config.json (config.h) as the argv of `kern box`: a bundle
 * becomes the same flags a user could type, so kern box's own parse,
 * validation and step configs (box_resolve.c) make the box, and a bundle
 * can be no more than a kern box can (the mapping, never a second
 * runtime). What kern box has no flag for and the config asks for is
 * refused here with one line naming the field. */
#ifndef KERN_OCIRUNTIME_MAP_H
#define KERN_OCIRUNTIME_MAP_H

#include <stddef.h>

#include "base/strv.h"
#include "ociruntime/config.h"

/* bundle: the bundle directory's canonical path; id: the container id,
 * also the box's NAME. argv gets "box", NAME, the flags, "--", the
 * command. Returns 0, or -1 with one line in why. */
int oci_map(const struct oci_config *c, const char *bundle, const char *id, struct strv *argv, char *why,
	    size_t wl);

/* root.path as a canonical host path (relative to the bundle when not
 * absolute) into out; -1 with why when it cannot be resolved, is not a
 * directory, or is the host's "/". */
int oci_root_path(const struct oci_config *c, const char *bundle, char *out, size_t len, char *why,
		  size_t wl);

#endif
