# kern: one multicall binary. `make` builds it dynamically for development,
# `make static` builds the single static release binary (mk/static.mk),
# `make check` runs every test, `make install` installs binary, applet links
# and man pages.

VERSION   := $(shell sed -n 's/.*KERN_VERSION "\(.*\)"/\1/p' lib/base/version.h)
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    := $(PREFIX)/bin
MANDIR    := $(PREFIX)/share/man
CC        ?= cc
B         := build

APPLETS   := pull unpack cg egress ns wait fs seccomp oci

# Format truncation: path lengths are bounded where the inputs are parsed
# (box-cli.md limits), so GCC's worst-case guesses are noise here. Clang
# has no such warning and, with -Werror, refuses the flag: CC=clang builds.
CC_IS_CLANG := $(shell $(CC) --version 2>/dev/null | grep -q clang && echo 1)
WARN      := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
	     $(if $(CC_IS_CLANG),,-Wno-format-truncation)
HARDEN    := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fno-strict-overflow
CPPFLAGS  += -D_GNU_SOURCE -Ilib -I$(B)/gen
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 $(WARN) $(HARDEN) -MMD -MP
# Dynamic development build: PIE with full RELRO.
DYN_CFLAGS  := -fPIE
DYN_LDFLAGS := -pie -Wl,-z,relro,-z,now
# What a box start needs. libcurl, libarchive, libmbedcrypto, zlib and
# libzstd are LAZY_LIBS (mk/lazylib.mk): opened on first use here, linked
# in the static build. libcap's archive is linked in where the system has
# one: a shared object fewer for the loader to map and search at every
# start (0.15 ms of `kern --version` here, 2% of a box start; issue 16).
LIBCAP_A  := $(shell $(CC) -print-file-name=libcap.a)
LIBS      := $(if $(filter /%,$(LIBCAP_A)),-l:libcap.a,-lcap)

# Sources by folder (ARCHITECTURE.md): lib/<subsystem>/*.c, the dispatcher
# applets/kern.c, the chain steps and the commands.
LIB_SRCS    := $(sort $(wildcard lib/*/*.c))
APPLET_SRCS := applets/kern.c $(sort $(wildcard applets/steps/*.c applets/commands/*.c))
OBJS        := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRCS) $(APPLET_SRCS))
LIB_OBJS    := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRCS))
UNIT_SRCS   := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJS   := $(patsubst %.c,$(B)/obj/%.o,$(UNIT_SRCS))

# Generated headers (seccomp programs, ...) that objects depend on; each
# mk/*.mk fragment appends its own.
GEN_HEADERS :=

.PHONY: all check check-oci unit lint install uninstall static bench fuzz clean links

all: $(B)/kern links $(B)/test/kern


-include mk/*.mk

$(B)/obj/%.o: %.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DYN_CFLAGS) -c -o $@ $<

$(B)/kern: $(OBJS)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $(OBJS) $(LIBS)

# The test build: the same sources with KERN_TEST_BUILD, which compiles in
# the hooks only the test suite may use (a phase at which kern pauses or
# dies, loopback targets for the egress proxy). Release builds never
# contain them, and a test proves it.
TEST_OBJS := $(patsubst %.c,$(B)/test/obj/%.o,$(LIB_SRCS) $(APPLET_SRCS))

$(B)/test/obj/%.o: %.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DKERN_TEST_BUILD $(CFLAGS) $(DYN_CFLAGS) -c -o $@ $<

$(B)/test/kern: $(TEST_OBJS)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $(TEST_OBJS) $(LIBS)

# build/bin holds kern and kern-<applet> links, for tests and examples;
# build/test/bin the same for the test build (an applet chain held at a
# phase hook).
links: $(B)/kern
	@mkdir -p $(B)/bin $(B)/test/bin
	@ln -sf ../kern $(B)/bin/kern
	@ln -sf ../kern $(B)/test/bin/kern
	@for a in $(APPLETS); do ln -sf ../kern $(B)/bin/kern-$$a; ln -sf ../kern $(B)/test/bin/kern-$$a; done

# C unit tests of lib/: tests/unit/*.c register cases with TEST() and
# tests/unit/runner.c runs them.
$(B)/unit: $(UNIT_OBJS) $(LIB_OBJS)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)

unit: $(B)/unit
	$(B)/unit

check: all $(B)/unit
	tests/run

# kern-oci under real engines (podman, containerd's ctr): test-only
# packages (podman, containerd, runc, docker-registry, skopeo), private
# engine storage and sockets, images from loopback or a file; then the OCI
# runtime-tools validations (tests/oci/runtime-tools-validation: built with
# golang-go from upstream's source, each result compared with
# tests/oci/runtime-tools-expected). Slower than make check and not part of
# it; a missing package skips with the reason. Both run; either failing
# fails the target.
check-oci: all
	rc=0; bats --tap tests/oci || rc=1; tests/oci/runtime-tools-validation || rc=1; exit $$rc

lint:
	tests/lint

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(or $(wildcard $(B)/kern-static),$(B)/kern) $(DESTDIR)$(BINDIR)/kern
	for a in $(APPLETS); do ln -sf kern $(DESTDIR)$(BINDIR)/kern-$$a; done
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/kern
	for a in $(APPLETS); do rm -f $(DESTDIR)$(BINDIR)/kern-$$a; done
	for m in man/*.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$${m#man/}; done

bench: all
	bench/run

clean:
	rm -rf $(B)

-include $(OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(UNIT_OBJS:.o=.d)
