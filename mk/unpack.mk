# Layer extraction (lib/layer_*.c, lib/tar_scan.c, ...): its codecs, and
# the libFuzzer targets FZ-2 and FZ-3 (`make fuzz`; the checked-in corpus
# is replayed by `make check` through tests/bats/unpack-fuzz.bats).
LIBS += -lz -lzstd -lpthread

FUZZ_CC      ?= clang
FUZZ_FLAGS   := -g -O1 -std=c11 -D_GNU_SOURCE -Ilib -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -fno-omit-frame-pointer
UNPACK_FUZZ_LIB := lib/layer_stage.c lib/layer_commit.c lib/layer_codec.c lib/layer_pump.c lib/tar_scan.c \
		lib/digest.c lib/sha256_x86.c \
		lib/member_path.c lib/dirmap.c lib/tree.c lib/path.c
UNPACK_FUZZERS  := $(B)/fuzz/fuzz_member_path $(B)/fuzz/fuzz_layer

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(UNPACK_FUZZ_LIB) $(wildcard lib/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(UNPACK_FUZZ_LIB) -larchive -lmbedcrypto -lz -lzstd -lpthread

# `make` builds the targets too when clang can, so `make check` replays
# the corpus (tests/bats/unpack-fuzz.bats skips, saying why, otherwise).
ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
all: $(UNPACK_FUZZERS)
endif

.PHONY: fuzz-unpack
fuzz-unpack: $(UNPACK_FUZZERS)
	tests/fuzz/run-unpack $(UNPACK_FUZZERS)

fuzz: fuzz-unpack
