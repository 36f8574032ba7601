/* FZ-8 (security-tests.md §11, fuzz targets): kern's seccomp programs in a
 * userspace BPF interpreter over arbitrary (architecture, mode, arch value,
 * number, arguments); every verdict must equal the reference of
 * isolation.md §6.2-§6.3, prologue and modes (tests/unit/bpf_interp.c).
 * Build: make fuzz. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_interp.h"
#include "seccomp_bpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* byte 0: architecture and mode; bytes 1-4: the arch field (or, when
	 * byte 0 says so, the native one); then nr and six arguments. */
	uint8_t sel = 0;
	struct bpf_seccomp_data d;
	memset(&d, 0, sizeof d);
	if (size > 0)
		sel = data[0];
	int a = sel & 1, m = (sel >> 1) % 3;
	size_t off = 1, n = size > off ? size - off : 0;
	uint8_t raw[4 + 4 + 6 * 8] = {0};
	memcpy(raw, data + (size > 0 ? off : 0), n < sizeof raw ? n : sizeof raw);
	memcpy(&d.arch, raw, 4);
	memcpy(&d.nr, raw + 4, 4);
	memcpy(d.args, raw + 8, sizeof d.args);
	if (sel & 0x80)	/* mostly exercise the native architecture */
		d.arch = a ? KERN_SECCOMP_AUDIT_ARCH_aarch64 : KERN_SECCOMP_AUDIT_ARCH_x86_64;
	if (sel & 0x40)	/* and mostly real call numbers */
		d.nr = (int32_t)((uint32_t)d.nr % 520);
	uint32_t got = bpf_run(kern_seccomp_progs[a][m].insns, kern_seccomp_progs[a][m].len, &d);
	uint32_t want = seccomp_reference(a, m, &d);
	if (got != want) {
		fprintf(stderr, "arch %d mode %d: arch 0x%x nr %d a0 0x%llx: program 0x%x, reference 0x%x\n", a,
			m, d.arch, d.nr, (unsigned long long)d.args[0], got, want);
		abort();
	}
	return 0;
}
