# kern-egress: the FZ-6 libFuzzer target (request head and authority
# parser) and the bench load generator. `make check` builds the fuzz target
# when clang is present and tests/bats/egress-fuzz.bats replays the corpus;
# `make fuzz-egress [FUZZ_TIME=s]` fuzzes and grows the corpus.

FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
EGRESS_FUZZ := $(B)/fuzz/egress_head
EGRESS_FUZZ_SRCS := tests/fuzz/egress_head.c lib/egress_head.c lib/egress_match.c
EGRESS_CORPUS := tests/fuzz/corpus/egress_head

$(EGRESS_FUZZ): $(EGRESS_FUZZ_SRCS) lib/egress_head.h lib/egress_match.h lib/egress.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -Ilib $(FUZZ_FLAGS) -o $@ $(EGRESS_FUZZ_SRCS)

.PHONY: fuzz-egress
fuzz-egress: $(EGRESS_FUZZ)
	@mkdir -p tests/fuzz/out/egress_head
	$(EGRESS_FUZZ) -max_total_time=$(or $(FUZZ_TIME),60) -max_len=20000 \
		tests/fuzz/out/egress_head $(EGRESS_CORPUS)
	$(EGRESS_FUZZ) -merge=1 $(EGRESS_CORPUS) tests/fuzz/out/egress_head

fuzz: fuzz-egress

ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
check: $(EGRESS_FUZZ)
endif

# bench/egress: a C load generator, so the measurement is of the proxy and
# not of an interpreter.
$(B)/bench/egress-load: bench/egress-load.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

bench: $(B)/bench/egress-load
