# Lockdown (isolation.md §5-§6): the seccomp programs, built once here by
# tools/seccomp-gen with libseccomp, the header coverage check, and the
# helpers the seccomp and capability tests run.

SECCOMP_NAMES  := data/seccomp/moby-allow-names.txt
SECCOMP_TABLES := data/seccomp/syscalls-x86_64.txt data/seccomp/syscalls-aarch64.txt
SECCOMP_GEN    := $(B)/tools/seccomp-gen
SECCOMP_POLICY := tools/seccomp-policy.c tools/seccomp-policy.h

# The installed kernel UAPI headers the coverage check reads; an
# architecture whose header is not installed is not checked.
SECCOMP_HDR_x86_64  := /usr/include/x86_64-linux-gnu/asm/unistd_64.h
SECCOMP_HDR_aarch64 := /usr/include/asm-generic/unistd.h
SECCOMP_HDR_ARCHES  := $(foreach a,x86_64 aarch64,$(if $(wildcard $(SECCOMP_HDR_$(a))),$(a)))
SECCOMP_HDR_TABLES  := $(foreach a,$(SECCOMP_HDR_ARCHES),$(B)/gen/syscalls-headers-$(a).txt)

$(SECCOMP_GEN): tools/seccomp-gen.c $(SECCOMP_POLICY)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Itools $(WARN) -O2 -o $@ tools/seccomp-gen.c tools/seccomp-policy.c -lseccomp

$(B)/gen/syscalls-headers-x86_64.txt: tools/syscall-table $(wildcard $(SECCOMP_HDR_x86_64))
	@mkdir -p $(dir $@)
	tools/syscall-table x86_64 $(SECCOMP_HDR_x86_64) >$@.tmp && mv $@.tmp $@
$(B)/gen/syscalls-headers-aarch64.txt: tools/syscall-table $(wildcard $(SECCOMP_HDR_aarch64))
	@mkdir -p $(dir $@)
	tools/syscall-table aarch64 $(SECCOMP_HDR_aarch64) >$@.tmp && mv $@.tmp $@

# Fails the build when the headers define a call that is neither allowed,
# denied nor reviewed, or disagree with the pinned tables.
$(B)/gen/seccomp_bpf.h: $(SECCOMP_GEN) $(SECCOMP_NAMES) $(SECCOMP_TABLES) $(SECCOMP_HDR_TABLES)
	@mkdir -p $(dir $@)
	$(SECCOMP_GEN) --names $(SECCOMP_NAMES) \
		--table x86_64=data/seccomp/syscalls-x86_64.txt --table aarch64=data/seccomp/syscalls-aarch64.txt \
		$(foreach a,$(SECCOMP_HDR_ARCHES),--check $(a)=$(B)/gen/syscalls-headers-$(a).txt) \
		--pfc $(B)/gen -o $@

GEN_HEADERS += $(B)/gen/seccomp_bpf.h

# Test helpers: small static probes (they also run inside boxes whose root
# is not the host's), the host-side lockdown driver, its SC-12 canary
# build, and the exec guard.
LOCKDOWN_PROBES := $(addprefix $(B)/helpers/,probe probe-int80 probe-x32 probe-clone probe-vsock)
$(LOCKDOWN_PROBES): $(B)/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -static -o $@ $<

$(B)/helpers/exec-guard: tests/helpers/exec-guard.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -o $@ $<

$(B)/helpers/lockdown-run: tests/helpers/lockdown-run.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS)

# The same driver with a deliberate exec of /bin/true before the filter
# (KERN_SC12_CANARY in lib/lockdown/lockdown.c): the SC-12 guard must catch it.
$(B)/helpers/obj/lockdown-canary.o: lib/lockdown/lockdown.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DKERN_SC12_CANARY $(CFLAGS) $(DYN_CFLAGS) -c -o $@ $<
$(B)/helpers/lockdown-run-canary: tests/helpers/lockdown-run.c $(B)/helpers/obj/lockdown-canary.o $(filter-out $(B)/obj/lib/lockdown/lockdown.o,$(LIB_OBJS))
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LIBS)

# kern itself with the canary: the guard must catch it in a real box.
$(B)/helpers/kern-canary: $(B)/helpers/obj/lockdown-canary.o $(filter-out $(B)/obj/lib/lockdown/lockdown.o,$(OBJS))
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)

LOCKDOWN_HELPERS := $(LOCKDOWN_PROBES) $(B)/helpers/exec-guard $(B)/helpers/lockdown-run \
	$(B)/helpers/lockdown-run-canary $(B)/helpers/kern-canary
.PHONY: lockdown-helpers
lockdown-helpers: $(LOCKDOWN_HELPERS)
check: lockdown-helpers

# The per-box cost of loading the prebuilt program against compiling the
# same policy with libseccomp at run time, side by side.
$(B)/bench/seccomp-load: bench/seccomp-load.c $(SECCOMP_POLICY) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Itools -I$(B)/gen $(WARN) -O2 -o $@ bench/seccomp-load.c tools/seccomp-policy.c -lseccomp
.PHONY: bench-seccomp
bench: $(B)/bench/seccomp-load
# bench/box-startup's floor row (bench/isolation-floor.c) is built in
# mk/static.mk, with the static kern's C library.
bench-seccomp: $(B)/bench/seccomp-load
	$(B)/bench/seccomp-load
