# The cgroup module's test helpers: cg-run (a minimal supervisor driving
# lib/cgroup.h as kern-wait does) and cg-hog (memory, tmpfs, fork and cpu
# workloads). Built with `all` so tests/run copies them with build/.
CG_HELPERS := $(B)/helpers/cg-run $(B)/helpers/cg-hog

all: $(CG_HELPERS)

$(B)/helpers/cg-run: $(B)/obj/tests/helpers/cg-run.o $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)

$(B)/helpers/cg-hog: $(B)/obj/tests/helpers/cg-hog.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $^

-include $(B)/obj/tests/helpers/cg-run.d $(B)/obj/tests/helpers/cg-hog.d

# FZ-5, kern.toml: the TOML subset parser under libFuzzer (make fuzz).
$(B)/fuzz/toml: tests/fuzz/toml.c lib/toml.c lib/toml.h
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -Ilib -g -O1 -fsanitize=fuzzer,address,undefined \
		-o $@ tests/fuzz/toml.c lib/toml.c
fuzz: $(B)/fuzz/toml
