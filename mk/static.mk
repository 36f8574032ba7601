# The static release build: `make static` links build/kern-static, ONE
# fully static, stripped binary, from the same lib/*/*.c and applets/ as
# the dynamic build, against musl (Debian's musl-dev, through musl-gcc)
# and libraries built here from Debian's SOURCE packages, each at the
# version of its installed -dev package and with Debian's patches, each
# configured for what kern uses and nothing else:
#   mbedtls     TLS 1.2 client with ECDHE + AES-GCM/ChaCha20-Poly1305, RSA
#               and ECDSA certificates, SHA-1/256/384/512 (see
#               mk/static/mbedtls_config.h);
#   libzstd     decompression only, no legacy (pre-1.0) frame formats;
#   zlib        as Debian builds it;
#   libarchive  no iconv, ACL, xattr, regex or codecs beyond gzip and zstd;
#   libcurl     HTTP and HTTPS over that mbedtls, no proxy, no HTTP auth
#               schemes (kern sends its own Authorization), no cookies...;
#   libcap      the library only;
#   libseccomp  the library only (kern-oci compiles a config's own
#               seccomp profile with it; kern's programs are prebuilt).
# Every one is compiled with -Os (libzstd and zlib with Debian's -O3:
# layer decompression speed), each function and object in its own section
# so that --gc-sections keeps only what is referenced, and without unwind
# tables (C, no exceptions; musl never unwinds). glibc is not used: its
# static libc alone (stdio's iconv, NSS, dlopen, locale) weighs 1 MB, musl's
# about 150 KB. bench/static-size prints the size and what it is made of.
#
# The built libraries are cached OUTSIDE the tree, one directory per
# package and Debian version, so a security update rebuilds only that
# package, and only the first build on a machine pays for all of them:
#   $KERN_DEPS_CACHE (default ~/.cache/kern-deps)/musl-<version>/<package>-<version>/
# Remove a directory to rebuild it; builds log to <package>-<version>.log
# beside it.
#
# Other fragments: new lib/*/*.c and applets/ files are linked
# automatically; every library in LIBS, LAZY_LIBS (which the dynamic
# build opens on first use: mk/lazylib.mk) and STATIC_LIBS must be one of
# the libraries above (musl-gcc never sees Debian's glibc libraries), linked
# in one --start-group, so their order does not matter. A new dependency
# means a new source build here.

# --- where the cached dependencies live --------------------------------------

# KERN_* variables: empty means unset.
KERN_DEPS_CACHE := $(or $(KERN_DEPS_CACHE),$(if $(HOME),$(HOME)/.cache/kern-deps,/nonexistent/kern-deps))
# The installed Debian versions name the cache: a security update of, say,
# libcurl4-openssl-dev makes the next `make static` build (and cache) a
# libcurl from the new source. Override <NAME>_DEB_VERSION to build another
# version of a source package. One dpkg-query asks, and none runs for the
# goals that never touch the static build (plain `make` stays fast).
ifneq ($(filter-out all links clean unit lint uninstall fuzz,$(or $(MAKECMDGOALS),all)),)
deb_versions := $(shell dpkg-query -W -f='$${db:Status-Abbrev}$${Package}=$${source:Version}\n' \
	musl-dev libmbedtls-dev libzstd-dev zlib1g-dev libarchive-dev libcurl4-openssl-dev libcap-dev \
	libseccomp-dev 2>/dev/null | sed -n 's/^ii *//p')
deb_version = $(patsubst $(1)=%,%,$(filter $(1)=%,$(deb_versions)))
MUSL_DEB_VERSION ?= $(call deb_version,musl-dev)
MBEDTLS_DEB_VERSION ?= $(call deb_version,libmbedtls-dev)
ZSTD_DEB_VERSION ?= $(call deb_version,libzstd-dev)
ZLIB_DEB_VERSION ?= $(call deb_version,zlib1g-dev)
LIBARCHIVE_DEB_VERSION ?= $(call deb_version,libarchive-dev)
CURL_DEB_VERSION ?= $(call deb_version,libcurl4-openssl-dev)
LIBCAP_DEB_VERSION ?= $(call deb_version,libcap-dev)
LIBSECCOMP_DEB_VERSION ?= $(call deb_version,libseccomp-dev)
endif
DEB_VERSION_VARS := MUSL_DEB_VERSION MBEDTLS_DEB_VERSION ZSTD_DEB_VERSION ZLIB_DEB_VERSION \
	LIBARCHIVE_DEB_VERSION CURL_DEB_VERSION LIBCAP_DEB_VERSION LIBSECCOMP_DEB_VERSION

# A colon (an epoch) cannot appear in a make target.
path_version = $(subst :,_,$(1))
DEPS := $(KERN_DEPS_CACHE)/musl-$(call path_version,$(MUSL_DEB_VERSION))
MBEDTLS_DIR := $(DEPS)/mbedtls-$(call path_version,$(MBEDTLS_DEB_VERSION))
ZSTD_DIR := $(DEPS)/libzstd-$(call path_version,$(ZSTD_DEB_VERSION))
ZLIB_DIR := $(DEPS)/zlib-$(call path_version,$(ZLIB_DEB_VERSION))
LIBARCHIVE_DIR := $(DEPS)/libarchive-$(call path_version,$(LIBARCHIVE_DEB_VERSION))
# libcurl compiles against mbedtls's headers (and its configuration).
CURL_DIR := $(DEPS)/curl-$(call path_version,$(CURL_DEB_VERSION))+mbedtls-$(call path_version,$(MBEDTLS_DEB_VERSION))
LIBCAP_DIR := $(DEPS)/libcap2-$(call path_version,$(LIBCAP_DEB_VERSION))
LIBSECCOMP_DIR := $(DEPS)/libseccomp-$(call path_version,$(LIBSECCOMP_DEB_VERSION))
DEP_DIRS := $(MBEDTLS_DIR) $(ZSTD_DIR) $(ZLIB_DIR) $(LIBARCHIVE_DIR) $(CURL_DIR) $(LIBCAP_DIR) $(LIBSECCOMP_DIR)
# One archive stands for each package (mbedtls installs three at once).
DEP_ARCHIVES := $(MBEDTLS_DIR)/lib/libmbedtls.a $(ZSTD_DIR)/lib/libzstd.a $(ZLIB_DIR)/lib/libz.a \
	$(LIBARCHIVE_DIR)/lib/libarchive.a $(CURL_DIR)/lib/libcurl.a $(LIBCAP_DIR)/lib/libcap.a \
	$(LIBSECCOMP_DIR)/lib/libseccomp.a
# musl-gcc searches musl's headers only: the Linux UAPI headers (Debian's
# linux-libc-dev) and jsmn.h (header-only, libjsmn-dev) are linked in here.
SYSINC := $(DEPS)/sysinclude
# Touched whenever a dependency was (re)built: kern relinks then, only then.
DEPS_READY := $(DEPS)/ready

# --- the static kern ---------------------------------------------------------

MUSL_CC ?= musl-gcc
STRIP ?= strip
# Small: -Os, every function and object in its own section so that
# --gc-sections drops what nothing references, no unwind tables. The
# hardening of the dynamic build that applies: stack protector (musl
# provides it), stack clash protection. _FORTIFY_SOURCE has no effect:
# musl's headers have no fortified variants. Recursive (=) so flags other
# fragments append to CFLAGS/CPPFLAGS after this file are seen.
# musl-gcc is GCC whatever CC is: it takes GCC's -Wno-format-truncation
# (Makefile) even when CFLAGS were made for Clang.
STATIC_CFLAGS = $(filter-out -O% -g%,$(CFLAGS)) -Os -ffunction-sections -fdata-sections \
	-fno-asynchronous-unwind-tables -fstack-clash-protection -Wno-format-truncation
# KERN_STATIC marks the release build; mk/static/musl_compat.h supplies
# the two Linux calls Debian's musl lacks. The dependencies' headers come
# first, matching the archives kern links.
STATIC_CPPFLAGS = $(CPPFLAGS) -DKERN_STATIC -include mk/static/musl_compat.h \
	$(foreach d,$(DEP_DIRS),-I$(d)/include) -isystem $(SYSINC)
STATIC_LDFLAGS := -static -Wl,--gc-sections -Wl,-z,relro,-z,now -Wl,-z,noexecstack
# libcurl's TLS, libarchive's and kern's gzip and zstd codecs.
STATIC_LIBS += -lmbedtls -lmbedx509 -lmbedcrypto -lzstd -lz
STATIC_LINK_LIBS = $(foreach d,$(DEP_DIRS),-L$(d)/lib) -Wl,--start-group $(LIBS) $(LAZY_LIBS) $(STATIC_LIBS) -Wl,--end-group

STATIC_OBJS := $(patsubst %.c,$(B)/static/obj/%.o,$(LIB_SRCS) $(APPLET_SRCS))

.PHONY: static-deps-force static-for-check

static: $(B)/kern-static
	@echo "$(B)/kern-static: $$(stat -c %s $(B)/kern-static) bytes stripped, $$(file -b $(B)/kern-static | grep -o 'statically linked')"

# GEN_HEADERS is appended to by fragments included after this one:
# second expansion reads it when the rule is used, not when it is parsed.
# The dependencies' headers come from the cache, so it must exist first.
.SECONDEXPANSION:
$(B)/static/obj/%.o: %.c $$(GEN_HEADERS) mk/static/musl_compat.h | $(DEPS_READY)
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(STATIC_CPPFLAGS) $(STATIC_CFLAGS) -c -o $@ $<

# Link unstripped, with a link map (bench/static-size reads it), kept for
# debugging as build/static/kern-static.debug; strip into build/kern-static.
$(B)/kern-static: $(STATIC_OBJS) $(DEPS_READY)
	@mkdir -p $(B)/static
	@echo "  LD      $@ (static, musl)"
	@$(MUSL_CC) $(STATIC_CFLAGS) $(STATIC_LDFLAGS) -o $(B)/static/kern-static.debug \
		-Wl,-Map=$(B)/static/kern-static.map $(STATIC_OBJS) $(STATIC_LINK_LIBS)
	$(STRIP) --strip-all -o $@.tmp $(B)/static/kern-static.debug
	@mv $@.tmp $@

# `make install` installs build/kern-static when it exists: keep it current.
install: $(if $(wildcard $(B)/kern-static),$(B)/kern-static)

# `make bench` reports the static binary's size (bench/static-size).
bench: static

# bench/box-startup's floor row: the default box's kernel work, kern's
# seccomp program included, without kern around it; static and against
# musl with the same compatibility header, as the kern it is compared
# with, so that the ratio compares kernel work and not two C libraries'
# starts. (Until December 2026 it was built against glibc, whose static
# start asks the CPU about its features and caches some 70 times, each a
# trap to the hypervisor on a VM: 0.5 ms a start here, which the floor
# carried and kern did not.)
$(B)/bench/isolation-floor: bench/isolation-floor.c $$(GEN_HEADERS) mk/static/musl_compat.h | $(SYSINC)/.kern-linked
	@mkdir -p $(dir $@)
	$(MUSL_CC) -std=c11 -D_GNU_SOURCE -I$(B)/gen -include mk/static/musl_compat.h -isystem $(SYSINC) \
		$(WARN) -O2 -static -o $@ bench/isolation-floor.c
bench: $(B)/bench/isolation-floor

# bench/box-startup's C library rows: nothing but a start and an exit, with
# the static release build's C library and with the dynamic development
# build's (bench/libc-start.c).
$(B)/bench/libc-start-static: bench/libc-start.c
	@mkdir -p $(dir $@)
	$(MUSL_CC) -std=c11 $(WARN) -O2 -static -o $@ bench/libc-start.c
$(B)/bench/libc-start-dyn: bench/libc-start.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O2 $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ bench/libc-start.c
bench: $(B)/bench/libc-start-static $(B)/bench/libc-start-dyn

# `make check` tests the static binary (tests/bats/static.bats). Built after
# `all` (generated headers are made once); when it cannot be built, the
# stale binary is removed so the static tests fail instead of testing it.
check: static-for-check
static-for-check: all
	@$(MAKE) --no-print-directory static >$(B)/static-build.log 2>&1 || \
		{ rm -f $(B)/kern-static; echo "make static failed: see $(B)/static-build.log" >&2; }

-include $(STATIC_OBJS:.o=.d)

# --- the dependencies, from Debian's source packages -------------------------

# Compiler flags for every dependency: small, with Debian's hardening that
# musl supports (see STATIC_CFLAGS).
DEPS_CFLAGS := -Os -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
	-fstack-protector-strong -fstack-clash-protection
# The codecs keep Debian's -O3: at -Os zstd decompresses layers at half
# the speed (bench: 0.7 against 1.4 GB/s), for 70 KB.
DEPS_FAST_CFLAGS := $(subst -Os,-O3,$(DEPS_CFLAGS))

ifeq ($(KERN_DEPS_LOCKED),)
# make -n runs recipe lines that use $(MAKE): the sub-make below would then
# run the dependencies' own $(MAKE) lines for real. Under -n, skip it.
dry_run := $(findstring n,$(firstword -$(MAKEFLAGS)))
# Outside the lock: every `make static` asks a sub-make, under flock (two
# worktrees may build at once into the same cache), whether the cached
# dependencies are current. When they are, that costs a fraction of a
# second and $(DEPS_READY) keeps its time stamp, so nothing relinks.
$(DEPS_READY): static-deps-force
	@for v in $(foreach v,$(DEB_VERSION_VARS),$(v)=$($(v))); do case $$v in *=) \
		echo "make static: needs musl-dev, libmbedtls-dev, libzstd-dev, zlib1g-dev, libarchive-dev, libcurl4-openssl-dev, libcap-dev and libseccomp-dev installed (./install.sh --deps-only): no version for $${v%=}" >&2; exit 1;; esac; done
	@command -v $(MUSL_CC) >/dev/null || { echo "make static: needs $(MUSL_CC) (musl-tools; ./install.sh --deps-only)" >&2; exit 1; }
	@mkdir -p $(DEPS)
	$(if $(dry_run),@true "make -n: the static deps in $(DEPS) are neither built nor checked",\
	@before=$$(stat -c %Y $@ 2>/dev/null); start=$$(date +%s); \
	flock $(DEPS)/.lock $(MAKE) --no-print-directory KERN_DEPS_LOCKED=1 \
		$(foreach v,$(DEB_VERSION_VARS),$(v)=$($(v))) $@ || exit 1; \
	[ "$$(stat -c %Y $@)" = "$$before" ] || echo "  static deps built in $$(( $$(date +%s) - start ))s, cached in $(DEPS)")
static-deps-force:
else
# Under the lock: the builds, one rule per step. Each package is fetched
# and unpacked into $(DEPS_WORK)/<package>, built there, installed into its
# cache directory, and its work directory deleted; the step stamps are
# .INTERMEDIATE, so their absence afterwards does not trigger a rebuild.
static-deps-force:
DEPS_WORK := $(DEPS)/work
DEBIAN_MIRROR ?= http://deb.debian.org/debian
DEBIAN_SECURITY_MIRROR ?= http://deb.debian.org/debian-security
# A private apt configuration: only deb-src lines for bookworm,
# bookworm-updates and bookworm-security, lists and caches in the work
# directory, so the host's apt state is neither read nor changed (and no
# root is needed).
APT_PRIVATE := -o Dir::Etc::SourceList=$(DEPS_WORK)/apt/sources.list \
	-o Dir::Etc::SourceParts=$(DEPS_WORK)/apt/sources.list.d \
	-o Dir::State::Lists=$(DEPS_WORK)/apt/lists -o Dir::Cache=$(DEPS_WORK)/apt/cache \
	-o APT::Sandbox::User=root -o Debug::NoLocking=true -q

# $(call logged,LOG,COMMAND): run COMMAND with its output appended to LOG;
# on failure show the end of LOG and fail.
logged = { $(2); } >>$(1) 2>&1 || { echo "make static: failed; the end of $(1):" >&2; tail -25 $(1) >&2; exit 1; }
# A .dsc file is named without the version's epoch.
no_epoch = $(lastword $(subst :, ,$(1)))

# 0. The configuration of a package as a file, rewritten only when it
#    changes: a change in this fragment rebuilds that package.
#    $(call build_flags,DIR,TEXT)
define build_flags
$(1)/build-flags: static-deps-force
	@mkdir -p $(1)
	@printf '%s\n' '$(2)' >$$@.new
	@if cmp -s $$@.new $$@; then rm $$@.new; else mv $$@.new $$@; fi
endef

# 0b. A file of this tree that a package's build reads, as a stamp that
#    changes only with the file's content: the cache outlives the checkout,
#    and a clone or worktree gives every file a fresh time stamp.
#    $(call content_stamp,STAMP,FILE)
define content_stamp
$(1): static-deps-force
	@mkdir -p $$(dir $$@)
	@sha256sum <$(2) >$$@.new
	@if cmp -s $$@.new $$@; then rm $$@.new; else mv $$@.new $$@; fi
endef

# 1. Index Debian's source packages with the private apt configuration.
#    apt verifies the InRelease signatures with Debian's archive keyring.
$(DEPS_WORK)/apt/updated:
	@echo "  APT     update (deb-src bookworm, bookworm-updates, bookworm-security)"
	@rm -rf $(DEPS_WORK)/apt && mkdir -p $(DEPS_WORK)/apt/lists/partial $(DEPS_WORK)/apt/cache $(DEPS_WORK)/apt/sources.list.d
	@printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		$(DEBIAN_MIRROR) bookworm $(DEBIAN_MIRROR) bookworm-updates \
		$(DEBIAN_SECURITY_MIRROR) bookworm-security >$(DEPS_WORK)/apt/sources.list
	@$(call logged,$(DEPS_WORK)/apt/update.log,apt-get $(APT_PRIVATE) update)
	@touch $@

# 2. Download exactly this version's .dsc and tarballs (apt checks each
#    file's hash against the signed index; one apt at a time, as they
#    share its caches; a package's log starts here), and 3. unpack it:
#    dpkg-source checks the tarballs against the .dsc and applies
#    Debian's patches.
#    With a fifth argument, a package whose source the archive does not
#    serve (a mirror that carries a security update's binaries but not
#    its source) is marked $(DEPS_WORK)/NAME/unserved instead of failing:
#    its build rule then takes Debian's own static library of the same
#    version (the libzstd rule below).
#    The index is an order-only prerequisite: fetching it for one package
#    that changed must not make every other package's source look newer
#    than its cached build (which rebuilt all of them).
#    $(call deb_source,NAME,SOURCE-PACKAGE,VERSION,LOG[,unserved-ok])
define deb_source
$(DEPS_WORK)/$(1)/$(2)_$(call no_epoch,$(3)).dsc: | $(DEPS_WORK)/apt/updated
	@echo "  APT     source $(2)=$(3)"
	@rm -rf $(DEPS_WORK)/$(1) && mkdir -p $(DEPS_WORK)/$(1) && : >$(4)
	@cd $(DEPS_WORK)/$(1) && flock $(DEPS_WORK)/apt/.lock \
		apt-get $(APT_PRIVATE) source --download-only $(2)=$(3) >>$(4) 2>&1 || { \
		tail -5 $(4) >&2; \
		if [ -n "$(5)" ] && grep -q '404 *Not Found' $(4); then \
			echo "make static: note: the archive lists $(2) $(3) but does not serve its source" >&2; \
			touch $(DEPS_WORK)/$(1)/unserved; exit 0; fi; \
		echo "make static: $(2) $(3) is not in the archive (any more?): upgrade its -dev package, or set the version ('apt-cache showsrc $(2)' lists them)" >&2; exit 1; }
$(DEPS_WORK)/$(1)/src/.kern-unpacked: $(DEPS_WORK)/$(1)/$(2)_$(call no_epoch,$(3)).dsc
	@rm -rf $(DEPS_WORK)/$(1)/src && mkdir -p $(DEPS_WORK)/$(1)/src
	@[ -e $(DEPS_WORK)/$(1)/unserved ] || { echo "  DPKG    source -x $(2) (Debian patches)" && \
		rm -rf $(DEPS_WORK)/$(1)/src && $$(call logged,$(4),dpkg-source -x $$< $(DEPS_WORK)/$(1)/src); }
	@touch $$@
.INTERMEDIATE: $(DEPS_WORK)/$(1)/$(2)_$(call no_epoch,$(3)).dsc $(DEPS_WORK)/$(1)/src/.kern-unpacked
endef
.INTERMEDIATE: $(DEPS_WORK)/apt/updated

# The end: every package current. The work directory (apt's lists, about
# 60 MB) goes; $(DEPS_READY) is touched only when something was built.
$(DEPS_READY): $(DEP_ARCHIVES) $(SYSINC)/.kern-linked
	@rm -rf $(DEPS_WORK)
	@touch $@

# The headers musl-gcc needs from outside musl, as links.
$(SYSINC)/.kern-linked:
	@rm -rf $(SYSINC) && mkdir -p $(SYSINC)
	@multiarch=$$(gcc -print-multiarch) && \
		ln -s /usr/include/linux /usr/include/asm-generic /usr/include/$$multiarch/asm \
		/usr/include/jsmn.h $(SYSINC)/
	@for h in linux/capability.h asm/unistd.h asm-generic/errno.h jsmn.h; do \
		[ -e $(SYSINC)/$$h ] || { echo "make static: $(SYSINC)/$$h is missing (linux-libc-dev, libjsmn-dev)" >&2; exit 1; }; done
	@touch $@

# --- mbedtls ---
MBEDTLS_SRC := $(DEPS_WORK)/mbedtls/src
MBEDTLS_LOG := $(MBEDTLS_DIR).log
$(eval $(call deb_source,mbedtls,mbedtls,$(MBEDTLS_DEB_VERSION),$(MBEDTLS_LOG)))
$(eval $(call build_flags,$(MBEDTLS_DIR),$(DEPS_CFLAGS)))
# 4. Our configuration replaces config.h; 5. the three libraries with
#    upstream's plain Makefile (Debian's CMake build makes the same
#    objects); 6. install them and the headers (with that config.h).
$(eval $(call content_stamp,$(MBEDTLS_DIR)/config-sha256,mk/static/mbedtls_config.h))
$(MBEDTLS_DIR)/lib/libmbedtls.a: $(MBEDTLS_DIR)/config-sha256 $(MBEDTLS_DIR)/build-flags $(MBEDTLS_SRC)/.kern-unpacked
	@echo "  MAKE    mbedtls (TLS 1.2 client, mk/static/mbedtls_config.h)"
	@cp mk/static/mbedtls_config.h $(MBEDTLS_SRC)/include/mbedtls/config.h
	@$(call logged,$(MBEDTLS_LOG),$(MAKE) -C $(MBEDTLS_SRC)/library CC=$(MUSL_CC) \
		CFLAGS="$(DEPS_CFLAGS)" libmbedcrypto.a libmbedx509.a libmbedtls.a)
	@rm -rf $(MBEDTLS_DIR)/lib $(MBEDTLS_DIR)/include && mkdir -p $(MBEDTLS_DIR)/lib $(MBEDTLS_DIR)/include
	@cp -a $(MBEDTLS_SRC)/include/mbedtls $(MBEDTLS_DIR)/include/
	@cp $(MBEDTLS_SRC)/library/libmbedcrypto.a $(MBEDTLS_SRC)/library/libmbedx509.a $(MBEDTLS_DIR)/lib/
	@cp $(MBEDTLS_SRC)/library/libmbedtls.a $@
	@rm -rf $(DEPS_WORK)/mbedtls

# --- libzstd ---
ZSTD_SRC := $(DEPS_WORK)/libzstd/src
ZSTD_LOG := $(ZSTD_DIR).log
# Decompression only (kern never compresses), without the decoders of the
# legacy v0.5-v0.7 formats (2016's pre-1.0 zstd: image layers are zstd
# 1.x frames) and without the dictionary builder.
ZSTD_MAKE_ARGS := ZSTD_LIB_COMPRESSION=0 ZSTD_LIB_DICTBUILDER=0 ZSTD_LIB_DEPRECATED=0 ZSTD_LEGACY_SUPPORT=0
$(eval $(call deb_source,libzstd,libzstd,$(ZSTD_DEB_VERSION),$(ZSTD_LOG),unserved-ok))
$(eval $(call build_flags,$(ZSTD_DIR),$(ZSTD_MAKE_ARGS) $(DEPS_FAST_CFLAGS)))
# When the archive does not serve the installed version's source, the
# fallback is the decompressor out of that same version's libzstd.a from
# libzstd-dev: Debian's build of the patched code, not an older source
# without the fix. Those objects were compiled against glibc, so only
# the decompression members go into kern's archive (never a compressor
# or the dictionary builder), and mk/static/zstd-members refuses them
# unless every C library symbol they need is one that means the same in
# musl. Debian builds the legacy v0.5-v0.7 decoders in: they come along.
ZSTD_DEBIAN_A := /usr/lib/$(shell gcc -print-multiarch 2>/dev/null)/libzstd.a
# 4. The static library with upstream's lib/Makefile (as Debian's build
#    does), 5. installed with its two public headers.
$(eval $(call content_stamp,$(ZSTD_DIR)/members-sha256,mk/static/zstd-members))
$(ZSTD_DIR)/lib/libzstd.a: $(ZSTD_DIR)/members-sha256 $(ZSTD_DIR)/build-flags $(ZSTD_SRC)/.kern-unpacked
	@rm -rf $(ZSTD_DIR)/lib $(ZSTD_DIR)/include && mkdir -p $(ZSTD_DIR)/lib $(ZSTD_DIR)/include
	@if [ -e $(DEPS_WORK)/libzstd/unserved ]; then \
		echo "  AR      libzstd (decompression members of Debian's $(ZSTD_DEBIAN_A), $(ZSTD_DEB_VERSION))"; \
		$(call logged,$(ZSTD_LOG),mk/static/zstd-members $(ZSTD_DEBIAN_A) $(ZSTD_DIR)/lib/libzstd.a.tmp) && \
		cp /usr/include/zstd.h /usr/include/zstd_errors.h $(ZSTD_DIR)/include/ && \
		echo "Debian's binary libzstd.a $(ZSTD_DEB_VERSION) (its source was not served)" >$(ZSTD_DIR)/origin && \
		mv $(ZSTD_DIR)/lib/libzstd.a.tmp $@; \
	else \
		echo "  MAKE    libzstd (decompression only, no legacy formats)"; \
		$(call logged,$(ZSTD_LOG),$(MAKE) -C $(ZSTD_SRC)/lib CC=$(MUSL_CC) CFLAGS="$(DEPS_FAST_CFLAGS)" \
			$(ZSTD_MAKE_ARGS) libzstd.a) && \
		cp $(ZSTD_SRC)/lib/zstd.h $(ZSTD_SRC)/lib/zstd_errors.h $(ZSTD_DIR)/include/ && \
		echo "Debian's source package libzstd $(ZSTD_DEB_VERSION)" >$(ZSTD_DIR)/origin && \
		cp $(ZSTD_SRC)/lib/libzstd.a $@; \
	fi
	@rm -rf $(DEPS_WORK)/libzstd

# --- zlib ---
ZLIB_SRC := $(DEPS_WORK)/zlib/src
ZLIB_LOG := $(ZLIB_DIR).log
# Debian's flags for zlib (-O3, unaligned loads in deflate).
ZLIB_CFLAGS := $(DEPS_FAST_CFLAGS) -DUNALIGNED_OK
$(eval $(call deb_source,zlib,zlib,$(ZLIB_DEB_VERSION),$(ZLIB_LOG)))
$(eval $(call build_flags,$(ZLIB_DIR),$(ZLIB_CFLAGS)))
# 4. zlib's own configure script, static only; 5. libz.a; 6. installed
#    with zlib.h and zconf.h.
$(ZLIB_DIR)/lib/libz.a: $(ZLIB_DIR)/build-flags $(ZLIB_SRC)/.kern-unpacked
	@echo "  MAKE    zlib"
	@$(call logged,$(ZLIB_LOG),cd $(ZLIB_SRC) && CC=$(MUSL_CC) CFLAGS="$(ZLIB_CFLAGS)" ./configure --static)
	@$(call logged,$(ZLIB_LOG),$(MAKE) -C $(ZLIB_SRC) libz.a)
	@rm -rf $(ZLIB_DIR)/lib $(ZLIB_DIR)/include && mkdir -p $(ZLIB_DIR)/lib $(ZLIB_DIR)/include
	@cp $(ZLIB_SRC)/zlib.h $(ZLIB_SRC)/zconf.h $(ZLIB_DIR)/include/
	@cp $(ZLIB_SRC)/libz.a $@
	@rm -rf $(DEPS_WORK)/zlib

# --- libcap ---
LIBCAP_SRC := $(DEPS_WORK)/libcap/src
LIBCAP_LOG := $(LIBCAP_DIR).log
# The library only: no shared objects, tools, PAM module or Go bindings.
# Its build compiles and runs a generator (cap_names.h) with the host's
# compiler.
LIBCAP_MAKE_ARGS := SHARED=no GOLANG=no PAM_CAP=no USE_GPERF=no BUILD_CC=$(CC)
$(eval $(call deb_source,libcap,libcap2,$(LIBCAP_DEB_VERSION),$(LIBCAP_LOG)))
$(eval $(call build_flags,$(LIBCAP_DIR),$(LIBCAP_MAKE_ARGS) $(DEPS_CFLAGS)))
# 4. libcap.a with upstream's Makefile, 5. installed with sys/capability.h.
$(LIBCAP_DIR)/lib/libcap.a: $(LIBCAP_DIR)/build-flags $(LIBCAP_SRC)/.kern-unpacked
	@echo "  MAKE    libcap"
	@$(call logged,$(LIBCAP_LOG),$(MAKE) -C $(LIBCAP_SRC)/libcap CC=$(MUSL_CC) COPTS="$(DEPS_CFLAGS)" \
		$(LIBCAP_MAKE_ARGS) libcap.a)
	@rm -rf $(LIBCAP_DIR)/lib $(LIBCAP_DIR)/include && mkdir -p $(LIBCAP_DIR)/lib $(LIBCAP_DIR)/include/sys
	@cp $(LIBCAP_SRC)/libcap/include/sys/capability.h $(LIBCAP_DIR)/include/sys/
	@cp $(LIBCAP_SRC)/libcap/libcap.a $@
	@rm -rf $(DEPS_WORK)/libcap

# --- libarchive ---
LIBARCHIVE_SRC := $(DEPS_WORK)/libarchive/src
LIBARCHIVE_LOG := $(LIBARCHIVE_DIR).log
# kern reads tar (layers, OCI layout and docker-save archives) from memory
# or a file, plain or through the gzip and zstd filters, and extracts
# members itself. Off: the command line tools, every other codec and
# crypto library (xar/mtree hashes), iconv (kern never calls setlocale: in
# the C locale the built-in conversion treats pax UTF-8 names as iconv
# would), and ACL, xattr and regex support, which only the disk
# reader/writer and pattern matching use (pax ACL and xattr records are
# still parsed).
LIBARCHIVE_CONFIGURE := --disable-shared --enable-static --disable-dependency-tracking \
	--disable-bsdtar --disable-bsdcat --disable-bsdcpio --disable-xattr --disable-acl \
	--disable-posix-regex-lib --with-zlib --with-zstd --without-iconv --without-bz2lib \
	--without-libb2 --without-lz4 --without-lzma --without-lzo2 --without-cng --without-mbedtls \
	--without-nettle --without-openssl --without-xml2 --without-expat
$(eval $(call deb_source,libarchive,libarchive,$(LIBARCHIVE_DEB_VERSION),$(LIBARCHIVE_LOG)))
$(eval $(call build_flags,$(LIBARCHIVE_DIR),$(LIBARCHIVE_CONFIGURE) $(DEPS_CFLAGS)))
LIBARCHIVE_STEPS := $(LIBARCHIVE_SRC)/.kern-autogen $(LIBARCHIVE_SRC)/.kern-configured
.INTERMEDIATE: $(LIBARCHIVE_STEPS)
# 4. Regenerate the build system, as debian/rules does (build/autogen.sh).
$(LIBARCHIVE_SRC)/.kern-autogen: $(LIBARCHIVE_SRC)/.kern-unpacked
	@echo "  AUTOGEN libarchive"
	@$(call logged,$(LIBARCHIVE_LOG),cd $(LIBARCHIVE_SRC) && sh build/autogen.sh)
	@touch $@
# 5. Configure against the zlib and libzstd above; refuse a configuration
#    that lost a codec kern needs or found iconv.
$(LIBARCHIVE_SRC)/.kern-configured: $(LIBARCHIVE_SRC)/.kern-autogen $(LIBARCHIVE_DIR)/build-flags \
		$(ZLIB_DIR)/lib/libz.a $(ZSTD_DIR)/lib/libzstd.a $(SYSINC)/.kern-linked
	@echo "  CONFIGURE libarchive (tar, gzip, zstd)"
	@$(call logged,$(LIBARCHIVE_LOG),cd $(LIBARCHIVE_SRC) && ./configure --prefix=$(LIBARCHIVE_DIR) \
		$(LIBARCHIVE_CONFIGURE) CC=$(MUSL_CC) CFLAGS="$(DEPS_CFLAGS)" \
		CPPFLAGS="-I$(ZLIB_DIR)/include -I$(ZSTD_DIR)/include -isystem $(SYSINC)" \
		LDFLAGS="-L$(ZLIB_DIR)/lib -L$(ZSTD_DIR)/lib")
	@for d in HAVE_LIBZ HAVE_ZLIB_H HAVE_LIBZSTD HAVE_ZSTD_H; do \
		grep -q "^#define $$d 1" $(LIBARCHIVE_SRC)/config.h || { echo "make static: libarchive configured without $$d" >&2; exit 1; }; done
	@! grep -q '^#define HAVE_ICONV 1' $(LIBARCHIVE_SRC)/config.h || { echo "make static: libarchive configured with iconv" >&2; exit 1; }
	@touch $@
# 6. Build only the library, 7. install it and its two headers.
$(LIBARCHIVE_DIR)/lib/libarchive.a: $(LIBARCHIVE_SRC)/.kern-configured
	@echo "  MAKE    libarchive.a"
	@$(call logged,$(LIBARCHIVE_LOG),$(MAKE) -C $(LIBARCHIVE_SRC) libarchive.la)
	@rm -rf $(LIBARCHIVE_DIR)/lib $(LIBARCHIVE_DIR)/include && mkdir -p $(LIBARCHIVE_DIR)/lib $(LIBARCHIVE_DIR)/include
	@cp $(LIBARCHIVE_SRC)/libarchive/archive.h $(LIBARCHIVE_SRC)/libarchive/archive_entry.h $(LIBARCHIVE_DIR)/include/
	@cp $(LIBARCHIVE_SRC)/.libs/libarchive.a $@
	@rm -rf $(DEPS_WORK)/libarchive

# --- libcurl ---
CURL_SRC := $(DEPS_WORK)/curl/src
CURL_LOG := $(CURL_DIR).log
# HTTP and HTTPS over the mbedtls above; every other protocol, every
# optional library and the features kern does not use off, which keeps the
# binary small and the attack surface narrow:
#   proxies      kern clears CURLOPT_PROXY so that no proxy from the
#                environment sees credentials or blobs; now none can;
#   HTTP auth    Basic/Digest/NTLM/Negotiate/AWS through curl: kern sends
#                its own Authorization header (Basic for tokens, Bearer);
#   date parsing only cookies, HSTS, alt-svc, If-Modified-Since and
#                CURLINFO_RETRY_AFTER dates need it; kern uses none;
#   cookies, netrc, alt-svc, HSTS, DoH, MIME, NTLM, unix sockets, the
#                header API, DNS shuffling, the progress meter.
# Verbose strings stay: without them curl_easy_strerror(), which kern
# prints when a request fails ("SSL peer certificate or SSH remote key was
# not OK"), returns only "Error". CA bundle: Debian's.
CURL_CONFIGURE := --disable-shared --enable-static --disable-dependency-tracking \
	--with-mbedtls=$(MBEDTLS_DIR) --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt --without-ca-path --without-ca-fallback \
	--enable-http --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
	--disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smb \
	--disable-smtp --disable-gopher --disable-mqtt --disable-websockets \
	--disable-proxy --disable-http-auth --disable-dateparse --disable-headers-api --disable-dnsshuffle \
	--disable-ntlm --disable-ntlm-wb --disable-tls-srp --disable-unix-sockets --disable-cookies \
	--disable-doh --disable-mime --disable-netrc --disable-progress-meter --disable-alt-svc \
	--disable-hsts --disable-get-easy-options --disable-manual --disable-libcurl-option \
	--disable-versioned-symbols --disable-curldebug --disable-debug --enable-threaded-resolver \
	--without-zlib --without-brotli --without-zstd --without-libpsl --without-libgsasl \
	--without-libssh2 --without-libssh --without-wolfssh --without-librtmp --without-libidn2 \
	--without-nghttp2 --without-ngtcp2 --without-nghttp3 --without-quiche --without-msh3 \
	--without-hyper --without-gssapi --without-zsh-functions-dir --without-fish-functions-dir
$(eval $(call deb_source,curl,curl,$(CURL_DEB_VERSION),$(CURL_LOG)))
$(eval $(call build_flags,$(CURL_DIR),$(CURL_CONFIGURE) $(DEPS_CFLAGS)))
CURL_STEPS := $(CURL_SRC)/.kern-patched $(CURL_SRC)/.kern-autoreconf $(CURL_SRC)/.kern-configured
.INTERMEDIATE: $(CURL_STEPS)
# 4. Debian's last two patches only rename the library for its GnuTLS and
#    NSS flavours; debian/rules pops them (quilt pop, twice) before
#    building the OpenSSL flavour, and so do we.
$(CURL_SRC)/.kern-patched: $(CURL_SRC)/.kern-unpacked
	@cd $(CURL_SRC) && for p in 99_nss.patch 90_gnutls.patch; do \
		patch -R -p1 -s <debian/patches/$$p || exit 1; done
	@touch $@
# 5. Regenerate the build system, as debian/rules does (./buildconf, that
#    is autoreconf -fi): Debian's patches change configure.ac.
$(CURL_SRC)/.kern-autoreconf: $(CURL_SRC)/.kern-patched
	@echo "  AUTORECONF curl"
	@$(call logged,$(CURL_LOG),cd $(CURL_SRC) && autoreconf -fi)
	@touch $@
# 6. Configure (see CURL_CONFIGURE) with the cache as prefix; refuse a
#    configuration with any protocol but HTTP and HTTPS.
$(CURL_SRC)/.kern-configured: $(CURL_SRC)/.kern-autoreconf $(CURL_DIR)/build-flags $(MBEDTLS_DIR)/lib/libmbedtls.a
	@echo "  CONFIGURE curl (HTTP, HTTPS, mbedtls)"
	@$(call logged,$(CURL_LOG),cd $(CURL_SRC) && ./configure --prefix=$(CURL_DIR) $(CURL_CONFIGURE) \
		CC=$(MUSL_CC) CFLAGS="$(DEPS_CFLAGS)")
	@grep -q '^ *Protocols: *HTTP HTTPS$$' $(CURL_LOG) || { echo "make static: curl configured protocols other than HTTP, HTTPS" >&2; exit 1; }
	@touch $@
# 7. Build only the library (not the curl tool), 8. install libcurl.a and
#    the headers.
$(CURL_DIR)/lib/libcurl.a: $(CURL_SRC)/.kern-configured
	@echo "  MAKE    libcurl.a"
	@rm -rf $(CURL_DIR)/lib $(CURL_DIR)/include
	@$(call logged,$(CURL_LOG),$(MAKE) -C $(CURL_SRC)/lib)
	@$(call logged,$(CURL_LOG),$(MAKE) -C $(CURL_SRC)/lib install && $(MAKE) -C $(CURL_SRC)/include install)
	@rm -rf $(CURL_DIR)/lib/libcurl.la $(CURL_DIR)/lib/pkgconfig
	@rm -rf $(DEPS_WORK)/curl
	@touch $@

# --- libseccomp ---
LIBSECCOMP_SRC := $(DEPS_WORK)/libseccomp/src
LIBSECCOMP_LOG := $(LIBSECCOMP_DIR).log
# The library only: no Python bindings, tools or tests.
LIBSECCOMP_CONFIGURE := --disable-shared --enable-static --disable-dependency-tracking --disable-python
$(eval $(call deb_source,libseccomp,libseccomp,$(LIBSECCOMP_DEB_VERSION),$(LIBSECCOMP_LOG)))
$(eval $(call build_flags,$(LIBSECCOMP_DIR),$(LIBSECCOMP_CONFIGURE) $(DEPS_CFLAGS)))
LIBSECCOMP_STEPS := $(LIBSECCOMP_SRC)/.kern-autoreconf $(LIBSECCOMP_SRC)/.kern-configured
.INTERMEDIATE: $(LIBSECCOMP_STEPS)
# 4. Regenerate the build system, as debian/rules does (dh's autoreconf).
$(LIBSECCOMP_SRC)/.kern-autoreconf: $(LIBSECCOMP_SRC)/.kern-unpacked
	@echo "  AUTORECONF libseccomp"
	@$(call logged,$(LIBSECCOMP_LOG),cd $(LIBSECCOMP_SRC) && autoreconf -fi)
	@touch $@
# 5. Configure with the Linux UAPI headers linked for musl-gcc.
$(LIBSECCOMP_SRC)/.kern-configured: $(LIBSECCOMP_SRC)/.kern-autoreconf $(LIBSECCOMP_DIR)/build-flags $(SYSINC)/.kern-linked
	@echo "  CONFIGURE libseccomp"
	@$(call logged,$(LIBSECCOMP_LOG),cd $(LIBSECCOMP_SRC) && ./configure --prefix=$(LIBSECCOMP_DIR) \
		$(LIBSECCOMP_CONFIGURE) CC=$(MUSL_CC) CFLAGS="$(DEPS_CFLAGS)" CPPFLAGS="-isystem $(SYSINC)")
	@touch $@
# 6. Build only the library, 7. install it and its two headers.
$(LIBSECCOMP_DIR)/lib/libseccomp.a: $(LIBSECCOMP_SRC)/.kern-configured
	@echo "  MAKE    libseccomp.a"
	@$(call logged,$(LIBSECCOMP_LOG),$(MAKE) -C $(LIBSECCOMP_SRC)/src libseccomp.la)
	@rm -rf $(LIBSECCOMP_DIR)/lib $(LIBSECCOMP_DIR)/include && mkdir -p $(LIBSECCOMP_DIR)/lib $(LIBSECCOMP_DIR)/include
	@cp $(LIBSECCOMP_SRC)/include/seccomp.h $(LIBSECCOMP_SRC)/include/seccomp-syscalls.h $(LIBSECCOMP_DIR)/include/
	@cp $(LIBSECCOMP_SRC)/src/.libs/libseccomp.a $@
	@rm -rf $(DEPS_WORK)/libseccomp
endif
