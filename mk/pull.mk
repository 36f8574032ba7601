# kern-pull: the libFuzzer targets FZ-1 (JSON, manifests, configs), FZ-4
# (references and cache keys) and FZ-7 (WWW-Authenticate). `make fuzz`
# builds them and runs each for PULL_FUZZ_SECONDS; `make check` builds them
# when clang is present and tests/bats/pull-fuzz.bats replays the corpus.
PULL_FUZZ_CC    ?= clang
PULL_FUZZ_FLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Ilib -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=undefined -fno-omit-frame-pointer
PULL_FUZZ_SECONDS ?= 60
PULL_FUZZ_LIB := lib/json.c lib/manifest.c lib/sidecar.c lib/digest.c lib/sha256_x86.c lib/imageref.c lib/cachekey.c \
		 lib/wwwauth.c
PULL_FUZZERS  := $(B)/fuzz/pull_json $(B)/fuzz/pull_ref $(B)/fuzz/pull_wwwauth

# Explicit rules (not a pattern) so they never compete with other fuzz rules.
define pull_fuzzer
$(B)/fuzz/$(1): tests/fuzz/$(1).c $(PULL_FUZZ_LIB) $(wildcard lib/*.h)
	@mkdir -p $(B)/fuzz
	$(PULL_FUZZ_CC) $(PULL_FUZZ_FLAGS) -o $$@ $$< $(PULL_FUZZ_LIB) -lmbedcrypto
endef
$(foreach f,pull_json pull_ref pull_wwwauth,$(eval $(call pull_fuzzer,$(f))))

.PHONY: fuzz-pull
fuzz-pull: $(PULL_FUZZERS)
	for f in $(PULL_FUZZERS); do \
		n=$$(basename $$f); mkdir -p $(B)/fuzz/corpus-$$n; \
		$$f -max_total_time=$(PULL_FUZZ_SECONDS) -max_len=65536 $(B)/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; \
	done

fuzz: fuzz-pull

ifneq ($(shell command -v $(PULL_FUZZ_CC) 2>/dev/null),)
check: $(PULL_FUZZERS)
endif
