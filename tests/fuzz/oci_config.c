/* kern-oci's config.json reader (lib/ociruntime/config.c) on arbitrary
 * bytes, as a bundle's config.json and as an exec's process.json.
 * Property: it never crashes or over-reads (ASan, UBSan); what it accepts
 * has a command (args NULL-terminated, first non-empty), a cwd, counts
 * within their arrays, and annotations that are one JSON object again;
 * a linux.seccomp it keeps compiles (seccomp.c) into a program the
 * kernel's checks accept (bpf_check), or fails with a reason.
 * Build: make fuzz. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "bpf_interp.h"
#include "ociruntime/config.h"
#include "ociruntime/seccomp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct oci_config c;

static void check_process(void)
{
	if (c.nargs < 1 || !c.args || c.args[c.nargs] != NULL || !c.args[0][0] || !c.cwd)
		abort();
	if (c.nenv > OCI_MAX_ENV || c.nrlimits > OCI_MAX_RLIMITS)
		abort();
	for (int s = 0; s < OCI_CAP_SETS; s++)
		if (c.ncaps[s] < 0 || c.ncaps[s] > OCI_MAX_CAPS)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[512];
	struct json j;
	const char *jwhy;
	if (oci_config_parse((const char *)data, size, &c, why, sizeof why) == 0) {
		check_process();
		if (!c.root || c.nmounts > OCI_MAX_MOUNTS || c.nns > OCI_MAX_NS || c.nmasked > OCI_MAX_PATHS)
			abort();
		if (json_parse(&j, c.annotations, strlen(c.annotations), 1u << 20, 4, &jwhy) < 0 ||
		    !json_is_object(&j, 0))
			abort();
		json_free(&j);
		struct sock_filter *p;
		unsigned n;
		if (c.seccomp_json) {
			if (oci_seccomp_compile(c.seccomp_json, c.seccomp_len, &p, &n, why, sizeof why) == 0) {
				if (bpf_check(p, n) != 0)
					abort();
				free(p);
			} else if (!why[0]) {
				abort();
			}
		}
		oci_config_free(&c);
	} else if (!why[0]) {
		abort();
	}
	if (oci_process_parse((const char *)data, size, &c, why, sizeof why) == 0) {
		check_process();
		oci_config_free(&c);
	}
	return 0;
}
