#!/bin/sh
# Install kern on Debian: build dependencies with apt (only what is
# missing), a static build when it can be made, else a dynamic one, then
# `make install`. Idempotent.
#
#   ./install.sh [--prefix DIR] [--dynamic] [--deps-only] [--uninstall]
set -eu
cd "$(dirname "$0")"
prefix=/usr/local mode=auto
while [ $# -gt 0 ]; do
	case $1 in
	--prefix) prefix=$2; shift ;;
	--prefix=*) prefix=${1#*=} ;;
	--dynamic) mode=dynamic ;;
	--deps-only) mode=deps ;;
	--uninstall) mode=uninstall ;;
	-h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "install.sh: unknown option '$1'" >&2; exit 1 ;;
	esac
	shift
done

if [ "$mode" = uninstall ]; then
	make -s uninstall PREFIX="$prefix"
	echo "kern removed from $prefix"
	exit 0
fi

# Build, test and runtime dependencies, all from Debian's archive.
# The static build (mk/static.mk) compiles kern against musl (musl-tools,
# musl-dev) and builds mbedtls, zstd, zlib, libarchive, libcurl and libcap
# from Debian's source packages of the installed -dev versions: apt-get
# source (with its own deb-src list, checked with debian-archive-keyring),
# dpkg-source, patch, autoreconf, libtool.
build_deps="make gcc pkgconf libc6-dev libseccomp-dev libcap-dev libarchive-dev libcurl4-openssl-dev
 libmbedtls-dev libjsmn-dev zlib1g-dev libbz2-dev liblzma-dev libzstd-dev liblz4-dev libacl1-dev
 libxml2-dev musl-tools musl-dev linux-libc-dev dpkg-dev uidmap autoconf automake libtool patch file
 debian-archive-keyring ca-certificates"
test_deps="bats mandoc cppcheck clang-tidy clang libclang-rt-14-dev python3 python3-pytest umoci zstd
 docker-registry skopeo debootstrap busybox-static iproute2 openssl curl bubblewrap procps nodejs"
# One dpkg-query for all of them: a second run of install.sh stays quick.
installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' $build_deps $test_deps 2>/dev/null |
	sed -n 's/^ii *//p' | tr '\n' ' ') "
missing=""
for p in $build_deps $test_deps; do
	case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
# The kern-mcp tests drive the server with the MCP TypeScript SDK, which
# they install with npm: Debian's nodejs ships without it (NodeSource's
# nodejs package carries its own).
command -v npm >/dev/null || missing="$missing npm"
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install.sh: missing Debian packages:$missing" >&2
		echo "install.sh: run as root, or: sudo apt-get install --no-install-recommends$missing" >&2
		exit 1
	fi
	echo "install.sh: installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null; }
fi
[ "$mode" = deps ] && exit 0

make -s -j"$(nproc)"
# The static build's first run on a machine compiles its libraries from
# Debian's sources (about 4 minutes on 2 cores); later runs reuse the cache
# in ~/.cache/kern-deps.
kind=dynamic
if [ "$mode" = auto ]; then
	echo "install.sh: building the static binary (log: build/static-build.log)"
	if make -s -j"$(nproc)" static >build/static-build.log 2>&1; then
		kind=static
	else
		echo "install.sh: note: the static build failed (build/static-build.log); installing the dynamic build"
	fi
fi
# `make install` installs build/kern-static whenever it exists.
[ "$kind" = static ] || rm -f build/kern-static
make -s install PREFIX="$prefix"
echo "kern $("$prefix/bin/kern" --version | cut -d' ' -f2) ($kind) installed in $prefix/bin"
