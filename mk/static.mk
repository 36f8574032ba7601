# The static release build: `make static` links build/kern-static, ONE
# fully static, stripped binary, from the same lib/*.c and applets/*.c as
# the dynamic build, against:
#   - Debian's static archives (.a from the -dev packages) for libcap,
#     libarchive and its codecs, zlib, libzstd, mbedtls;
#   - a libcurl built here from Debian's curl SOURCE package (the same
#     version and Debian patches as the installed libcurl4-openssl-dev),
#     configured for HTTP and HTTPS over mbedtls and nothing else. Debian
#     ships no static libcurl without OpenSSL, nghttp2, libidn2, libpsl,
#     ldap, rtmp, ssh and krb5, none of which kern needs.
# The built libcurl is cached OUTSIDE the tree, so only the first build on
# a machine pays for it (about 4 minutes of CPU, 2 minutes on 2 idle cores):
#   $KERN_DEPS_CACHE (default ~/.cache/kern-deps)/<curl-version>-<mbedtls-version>/
# Remove that directory to rebuild it.
#
# Other fragments: new lib/*.c and applets/*.c files are linked
# automatically; libraries in LIBS are linked statically (-lcurl becomes
# the cached libcurl.a); a library the static link needs beyond LIBS (a
# dependency of a dependency) goes in STATIC_LIBS, e.g.
#   STATIC_LIBS += -llzma
# All libraries are linked in one --start-group, so their order does not
# matter, and with --gc-sections only what is referenced is kept.

# --- where the cached dependencies live --------------------------------------

# KERN_* variables: empty means unset.
KERN_DEPS_CACHE := $(or $(KERN_DEPS_CACHE),$(if $(HOME),$(HOME)/.cache/kern-deps,/nonexistent/kern-deps))
# The installed Debian versions name the cache: a security update of
# libcurl4-openssl-dev or libmbedtls-dev makes the next `make static` build
# (and cache) a libcurl from the new source. Override CURL_DEB_VERSION to
# build another version of the source package. One dpkg-query asks, and
# none runs for the goals that never touch the static build (plain `make`
# stays fast).
ifneq ($(filter-out all links clean unit lint uninstall bench fuzz,$(or $(MAKECMDGOALS),all)),)
deb_versions := $(shell dpkg-query -W -f='$${db:Status-Abbrev}$${Package}=$${Version}\n' \
	libcurl4-openssl-dev libmbedtls-dev 2>/dev/null | sed -n 's/^ii *//p')
CURL_DEB_VERSION ?= $(patsubst libcurl4-openssl-dev=%,%,$(filter libcurl4-openssl-dev=%,$(deb_versions)))
MBEDTLS_DEB_VERSION ?= $(patsubst libmbedtls-dev=%,%,$(filter libmbedtls-dev=%,$(deb_versions)))
endif
# A colon (an epoch) cannot appear in a make target.
KERN_DEPS := $(KERN_DEPS_CACHE)/$(subst :,_,$(CURL_DEB_VERSION)-$(MBEDTLS_DEB_VERSION))
CURL_A := $(KERN_DEPS)/lib/libcurl.a

# --- the static kern ---------------------------------------------------------

STRIP ?= strip
# Small: -Os, every function and object in its own section so that
# --gc-sections drops what nothing references. Recursive (=) so flags other
# fragments append to CFLAGS/CPPFLAGS after this file are seen.
STATIC_CFLAGS = $(filter-out -O% -g%,$(CFLAGS)) -Os -ffunction-sections -fdata-sections
# KERN_STATIC: lib/static_nss.c pins NSS to libc's built-in backends. The
# cached curl headers come first, matching the cached libcurl.a.
STATIC_CPPFLAGS = $(CPPFLAGS) -DKERN_STATIC -I$(KERN_DEPS)/include
STATIC_LDFLAGS := -static -Wl,--gc-sections -Wl,-z,relro,-z,now -Wl,-z,noexecstack
# libcurl's TLS, libarchive's gzip and zstd codecs.
STATIC_LIBS += -lmbedtls -lmbedx509 -lmbedcrypto -lzstd -lz
STATIC_LINK_LIBS = $(patsubst -lcurl,$(CURL_A),$(LIBS)) $(STATIC_LIBS)

STATIC_OBJS := $(patsubst %.c,$(B)/static/obj/%.o,$(LIB_SRCS) $(APPLET_SRCS))

.PHONY: static-deps-force static-for-check

static: $(B)/kern-static
	@echo "$(B)/kern-static: $$(stat -c %s $(B)/kern-static) bytes stripped, $$(file -b $(B)/kern-static | grep -o 'statically linked')"

# GEN_HEADERS is appended to by fragments included after this one:
# second expansion reads it when the rule is used, not when it is parsed.
# The curl headers come from the cache, so it must exist first.
.SECONDEXPANSION:
$(B)/static/obj/%.o: %.c $$(GEN_HEADERS) | $(CURL_A)
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_CPPFLAGS) $(STATIC_CFLAGS) -c -o $@ $<

# glibc warns at static link time about every NSS function (getaddrinfo
# from libcurl, getpw*/getgr*): in a static binary they would dlopen NSS
# modules. lib/static_nss.c pins those databases to the backends built into
# libc, so these warnings are expected and dropped (with the "in function"
# line ld prints before each); any other linker message is shown.
define drop_pinned_nss_warnings
awk '/: in function `/ { held = $$0; next } \
     /warning: Using .(getaddrinfo|gethostbyname[0-9]*(_r)?|getpw(nam|uid|ent)(_r)?|getgr(nam|gid|ent)(_r)?). in statically linked/ { held = ""; next } \
     { if (held != "") print held; held = ""; print } \
     END { if (held != "") print held }'
endef

# Link unstripped (kept for debugging as build/static/kern-static.debug),
# then strip into build/kern-static.
$(B)/kern-static: $(STATIC_OBJS) $(CURL_A)
	@mkdir -p $(B)/static
	@echo "  LD      $@ (static)"
	@$(CC) $(STATIC_CFLAGS) $(STATIC_LDFLAGS) -o $(B)/static/kern-static.debug $(STATIC_OBJS) \
		-Wl,--start-group $(STATIC_LINK_LIBS) -Wl,--end-group 2>$(B)/static/link.log; \
	rc=$$?; $(drop_pinned_nss_warnings) $(B)/static/link.log >&2; exit $$rc
	$(STRIP) --strip-all -o $@.tmp $(B)/static/kern-static.debug
	@mv $@.tmp $@

# `make install` installs build/kern-static when it exists: keep it current.
install: $(if $(wildcard $(B)/kern-static),$(B)/kern-static)

# `make check` tests the static binary (tests/bats/static.bats). Built after
# `all` (generated headers are made once); when it cannot be built, the
# stale binary is removed so the static tests fail instead of testing it.
check: static-for-check
static-for-check: all
	@$(MAKE) --no-print-directory static >$(B)/static-build.log 2>&1 || \
		{ rm -f $(B)/kern-static; echo "make static failed: see $(B)/static-build.log" >&2; }

-include $(STATIC_OBJS:.o=.d)

# --- libcurl from Debian's source package ------------------------------------

# curl's configure line: HTTP and HTTPS over mbedtls; every other protocol,
# every optional library and the features kern does not use (cookies,
# netrc, alt-svc, HSTS, DoH, MIME, NTLM, unix sockets) off, which keeps the
# binary small and the attack surface narrow. CA bundle: Debian's.
CURL_CONFIGURE := --disable-shared --enable-static --disable-dependency-tracking \
	--with-mbedtls --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt --without-ca-path --without-ca-fallback \
	--enable-http --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
	--disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smb \
	--disable-smtp --disable-gopher --disable-mqtt --disable-websockets \
	--disable-ntlm --disable-ntlm-wb --disable-tls-srp --disable-unix-sockets --disable-cookies \
	--disable-doh --disable-mime --disable-netrc --disable-progress-meter --disable-alt-svc \
	--disable-hsts --disable-get-easy-options --disable-manual --disable-libcurl-option \
	--disable-versioned-symbols --disable-curldebug --disable-debug --enable-threaded-resolver \
	--without-zlib --without-brotli --without-zstd --without-libpsl --without-libgsasl \
	--without-libssh2 --without-libssh --without-wolfssh --without-librtmp --without-libidn2 \
	--without-nghttp2 --without-ngtcp2 --without-nghttp3 --without-quiche --without-msh3 \
	--without-hyper --without-gssapi --without-zsh-functions-dir --without-fish-functions-dir
# Debian's hardening flags, with -Os and per-function sections as above.
CURL_CFLAGS := -Os -ffunction-sections -fdata-sections -fstack-protector-strong \
	-fstack-clash-protection -fcf-protection
CURL_CPPFLAGS := -D_FORTIFY_SOURCE=2

ifeq ($(KERN_DEPS_LOCKED),)
# make -n runs recipe lines that use $(MAKE): the sub-make below would then
# run the curl build's own $(MAKE) lines for real. Under -n, skip it.
dry_run := $(findstring n,$(firstword -$(MAKEFLAGS)))
# Outside the lock: every `make static` asks a sub-make, under flock (two
# worktrees may build at once into the same cache), whether the cached
# libcurl is current. When it is, that costs a fraction of a second and
# libcurl.a keeps its time stamp, so nothing relinks.
$(CURL_A): static-deps-force
	@if [ -z "$(CURL_DEB_VERSION)" ] || [ -z "$(MBEDTLS_DEB_VERSION)" ]; then \
		echo "make static: needs libcurl4-openssl-dev and libmbedtls-dev installed (./install.sh --deps-only)" >&2; exit 1; fi
	@mkdir -p $(KERN_DEPS)
	$(if $(dry_run),@true "make -n: the static deps in $(KERN_DEPS) are neither built nor checked",\
	@cold=$$([ -e $@ ] || date +%s); \
	flock $(KERN_DEPS)/.lock $(MAKE) --no-print-directory KERN_DEPS_LOCKED=1 \
		CURL_DEB_VERSION=$(CURL_DEB_VERSION) MBEDTLS_DEB_VERSION=$(MBEDTLS_DEB_VERSION) $@ || exit 1; \
	[ -z "$$cold" ] || echo "  static deps built in $$(( $$(date +%s) - cold ))s, cached in $(KERN_DEPS)")
static-deps-force:
else
# Under the lock: the build, one rule per step. Work happens in
# $(KERN_DEPS)/work, which is deleted once libcurl.a and its headers are
# installed in the cache; the step stamps are .INTERMEDIATE, so their
# absence then does not trigger a rebuild.
CURL_WORK := $(KERN_DEPS)/work
CURL_UPSTREAM := $(firstword $(subst -, ,$(CURL_DEB_VERSION)))
CURL_SRC := $(CURL_WORK)/curl-$(CURL_UPSTREAM)
CURL_DSC := $(CURL_WORK)/curl_$(subst :,_,$(CURL_DEB_VERSION)).dsc
CURL_LOG := $(KERN_DEPS)/build.log
DEBIAN_MIRROR ?= http://deb.debian.org/debian
DEBIAN_SECURITY_MIRROR ?= http://deb.debian.org/debian-security
# A private apt configuration: only deb-src lines for bookworm and
# bookworm-security, lists and caches in the work directory, so the host's
# apt state is neither read nor changed (and no root is needed).
APT_PRIVATE := -o Dir::Etc::SourceList=$(CURL_WORK)/apt/sources.list \
	-o Dir::Etc::SourceParts=$(CURL_WORK)/apt/sources.list.d \
	-o Dir::State::Lists=$(CURL_WORK)/apt/lists -o Dir::Cache=$(CURL_WORK)/apt/cache \
	-o APT::Sandbox::User=root -o Debug::NoLocking=true -q
CURL_STEPS := $(CURL_WORK)/apt/updated $(CURL_SRC)/.kern-patched \
	$(CURL_SRC)/.kern-autoreconf $(CURL_SRC)/.kern-configured
.INTERMEDIATE: $(CURL_STEPS) $(CURL_DSC)

# The configure line as a file, rewritten only when it changes: a change in
# this fragment rebuilds the cached libcurl.
$(KERN_DEPS)/configure-args: static-deps-force
	@printf '%s\n' '$(CURL_CONFIGURE) CFLAGS=$(CURL_CFLAGS) CPPFLAGS=$(CURL_CPPFLAGS)' >$@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi
static-deps-force:

# 1. Index the Debian source packages with the private apt configuration.
#    apt verifies the InRelease signatures with Debian's archive keyring.
$(CURL_WORK)/apt/updated:
	@echo "  APT     update (deb-src bookworm, bookworm-security)"
	@rm -rf $(CURL_WORK) && mkdir -p $(CURL_WORK)/apt/lists/partial $(CURL_WORK)/apt/cache $(CURL_WORK)/apt/sources.list.d
	@printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		$(DEBIAN_MIRROR) bookworm $(DEBIAN_SECURITY_MIRROR) bookworm-security >$(CURL_WORK)/apt/sources.list
	@apt-get $(APT_PRIVATE) update >$(CURL_LOG) 2>&1 || { tail -20 $(CURL_LOG) >&2; exit 1; }
	@touch $@

# 2. Download exactly this version's .dsc, .orig.tar.gz and .debian.tar.xz;
#    apt checks each file's hash against the signed index.
$(CURL_DSC): $(CURL_WORK)/apt/updated
	@echo "  APT     source curl=$(CURL_DEB_VERSION)"
	@cd $(CURL_WORK) && apt-get $(APT_PRIVATE) source --download-only curl=$(CURL_DEB_VERSION) >>$(CURL_LOG) 2>&1 || { \
		tail -5 $(CURL_LOG) >&2; \
		echo "make static: curl $(CURL_DEB_VERSION) is not in the archive (any more?): upgrade libcurl4-openssl-dev, or set CURL_DEB_VERSION to a version 'apt-cache showsrc curl' lists" >&2; exit 1; }

# 3. Unpack: dpkg-source checks the tarballs against the .dsc checksums and
#    applies Debian's patch series. Its last two patches only rename the
#    library for Debian's GnuTLS and NSS flavours; debian/rules pops them
#    (quilt pop, twice) before building the OpenSSL flavour, and so do we.
$(CURL_SRC)/.kern-patched: $(CURL_DSC)
	@echo "  DPKG    source -x $(notdir $<) (Debian patches)"
	@rm -rf $(CURL_SRC)
	@dpkg-source -x $< $(CURL_SRC) >>$(CURL_LOG) 2>&1 || { tail -20 $(CURL_LOG) >&2; exit 1; }
	@cd $(CURL_SRC) && for p in 99_nss.patch 90_gnutls.patch; do \
		patch -R -p1 -s <debian/patches/$$p || exit 1; done
	@touch $@

# 4. Regenerate the build system, as debian/rules does (./buildconf, that
#    is autoreconf -fi): Debian's patches change configure.ac.
$(CURL_SRC)/.kern-autoreconf: $(CURL_SRC)/.kern-patched
	@echo "  AUTORECONF curl"
	@cd $(CURL_SRC) && autoreconf -fi >>$(CURL_LOG) 2>&1 || { tail -20 $(CURL_LOG) >&2; exit 1; }
	@touch $@

# 5. Configure (see CURL_CONFIGURE) with the cache as prefix.
$(CURL_SRC)/.kern-configured: $(CURL_SRC)/.kern-autoreconf $(KERN_DEPS)/configure-args
	@echo "  CONFIGURE curl (HTTP, HTTPS, mbedtls)"
	@cd $(CURL_SRC) && ./configure --prefix=$(KERN_DEPS) $(CURL_CONFIGURE) CC="$(CC)" \
		CFLAGS="$(CURL_CFLAGS)" CPPFLAGS="$(CURL_CPPFLAGS)" >>$(CURL_LOG) 2>&1 || { tail -20 $(CURL_LOG) >&2; exit 1; }
	@grep -q '^ *Protocols: *HTTP HTTPS$$' $(CURL_LOG) || { echo "make static: curl configured protocols other than HTTP, HTTPS" >&2; exit 1; }
	@touch $@

# 6. Build only the library (not the curl tool), install libcurl.a and the
#    headers into the cache, and drop the work directory.
$(CURL_A): $(CURL_SRC)/.kern-configured
	@echo "  MAKE    libcurl.a"
	@rm -rf $(KERN_DEPS)/lib $(KERN_DEPS)/include
	@$(MAKE) -C $(CURL_SRC)/lib >>$(CURL_LOG) 2>&1 || { tail -20 $(CURL_LOG) >&2; exit 1; }
	@$(MAKE) -C $(CURL_SRC)/lib install >>$(CURL_LOG) 2>&1 && \
		$(MAKE) -C $(CURL_SRC)/include install >>$(CURL_LOG) 2>&1 || { tail -20 $(CURL_LOG) >&2; exit 1; }
	@rm -f $(KERN_DEPS)/lib/libcurl.la
	@rm -rf $(CURL_WORK)
	@touch $@
endif
