# Every libFuzzer target of security-tests.md §11, one mechanism:
#   make fuzz [FUZZ_TIME=s | FUZZ_CPU_TIME=s] [FUZZ_MINIMISE=1] [FUZZ_TARGETS="a b"]
# builds each tests/fuzz/NAME.c with ASan and UBSan, fuzzes it from its
# checked-in corpus (tests/fuzz/corpus/NAME) and regressions
# (tests/fuzz/regressions/NAME), merges what it finds back into the
# corpus and prints one line per target (tests/fuzz/run says how).
# `make check` builds them when clang is present and tests/bats/fuzz.bats
# replays every corpus and regression input.
#
# A new target: tests/fuzz/NAME.c, a seed corpus directory, and three
# lines here (the name in FUZZ_ALL, its sources and libraries, its run
# flags).

FUZZ_CC    ?= clang
FUZZ_FLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Ilib -I$(B)/gen -Itests/unit \
	      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

FUZZ_ALL := pull_json pull_ref pull_wwwauth fuzz_member_path fuzz_layer egress_head toml seccomp_bpf \
	    cli image_config box_record oci_config

# The lib/ sources (and libraries) each target links.
FUZZ_PULL_LIB   := lib/base/json.c lib/oci/manifest.c lib/image/sidecar.c lib/oci/digest.c \
		   lib/oci/sha256_x86.c lib/oci/ref.c lib/image/cachekey.c lib/oci/wwwauth.c lib/base/strv.c
FUZZ_UNPACK_LIB := $(sort $(wildcard lib/layer/*.c)) lib/oci/digest.c lib/oci/sha256_x86.c \
		   lib/base/tree.c lib/base/path.c lib/base/strv.c
fuzz_src_pull_json        := $(FUZZ_PULL_LIB)
fuzz_src_pull_ref         := $(FUZZ_PULL_LIB)
fuzz_src_pull_wwwauth     := $(FUZZ_PULL_LIB)
fuzz_src_fuzz_member_path := $(FUZZ_UNPACK_LIB)
fuzz_src_fuzz_layer       := $(FUZZ_UNPACK_LIB)
fuzz_src_egress_head      := lib/egress/head.c lib/egress/match.c
fuzz_src_toml             := lib/base/toml.c
fuzz_src_seccomp_bpf      := tests/unit/bpf_interp.c
fuzz_src_cli              := lib/box/mountspec.c lib/base/parse.c lib/base/path.c lib/lockdown/ulimit.c \
			     lib/box/users.c lib/box/envfile.c lib/base/strv.c lib/base/fdutil.c lib/base/clock.c
fuzz_src_image_config     := lib/oci/manifest.c lib/base/json.c lib/image/sidecar.c lib/oci/digest.c \
			     lib/oci/sha256_x86.c lib/base/strv.c lib/box/envfile.c lib/base/fdutil.c \
			     lib/base/clock.c lib/box/users.c lib/base/path.c lib/base/parse.c
fuzz_src_box_record       := lib/state/records.c lib/state/runtime_dirs.c lib/base/diag.c lib/base/xdg.c \
			     lib/base/rmtree.c \
			     lib/base/env.c lib/base/parse.c
fuzz_src_oci_config       := lib/ociruntime/config.c lib/ociruntime/seccomp.c lib/base/json.c lib/base/strv.c \
			     tests/unit/bpf_interp.c
fuzz_dep_seccomp_bpf       := $(B)/gen/seccomp_bpf.h
fuzz_dep_oci_config        := $(B)/gen/seccomp_bpf.h
fuzz_libs_pull_json        := -lmbedcrypto
fuzz_libs_pull_ref         := -lmbedcrypto
fuzz_libs_pull_wwwauth     := -lmbedcrypto
fuzz_libs_fuzz_member_path := -larchive -lmbedcrypto -lz -lzstd -lpthread
fuzz_libs_fuzz_layer       := -larchive -lmbedcrypto -lz -lzstd -lpthread
fuzz_libs_cli              := -lcap
fuzz_libs_image_config     := -lmbedcrypto -lcap
fuzz_libs_box_record       := -lcap
fuzz_libs_oci_config       := -lseccomp

# libFuzzer flags for fuzzing and replay: inputs as long as the format
# needs (a tar stream of a few dozen blocks reaches every check; a request
# head is capped at 16 KiB), and the layer extractor's time and memory.
fuzz_args_pull_json        := -max_len=65536
fuzz_args_pull_ref         := -max_len=65536
fuzz_args_pull_wwwauth     := -max_len=65536
fuzz_args_fuzz_member_path := -max_len=65536 -timeout=20 -rss_limit_mb=2048
fuzz_args_fuzz_layer       := -max_len=65536 -timeout=20 -rss_limit_mb=2048
fuzz_args_egress_head      := -max_len=20000
fuzz_args_image_config     := -max_len=65536
fuzz_args_oci_config       := -max_len=65536

FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_BINS    := $(addprefix $(B)/fuzz/,$(FUZZ_ALL))

define fuzz_target
$(B)/fuzz/$(1): tests/fuzz/$(1).c $(fuzz_src_$(1)) $(wildcard lib/*/*.h) $(fuzz_dep_$(1))
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $$@ $$< $(fuzz_src_$(1)) $(fuzz_libs_$(1))
endef
$(foreach t,$(FUZZ_ALL),$(eval $(call fuzz_target,$(t))))

# Every target runs even when one fails; the status is 1 if any did.
fuzz: $(addprefix $(B)/fuzz/,$(FUZZ_TARGETS))
	@rc=0; $(foreach t,$(FUZZ_TARGETS),tests/fuzz/run $(B)/fuzz/$(t) $(fuzz_args_$(t)) || rc=1;) exit $$rc

ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
check: $(FUZZ_BINS)
endif
