#!/bin/sh
# Install kern on Debian: build dependencies with apt (only what is
# missing), a static build when it can be made, else a dynamic one, then
# `make install`, then the kern_sandbox Python package (bindings/python)
# for Debian's python3 and any other python3 on PATH. Idempotent.
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

# The interpreters the Python package is installed for: Debian's own
# (the one a fresh Debian box has) and python3 on PATH when it is another
# one (a pyenv build, say), each in its own site-packages.
pythons() {
	[ -x /usr/bin/python3 ] && echo /usr/bin/python3
	other=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || return 0
	[ -n "$other" ] && [ "$(readlink -f "$other")" != "$(readlink -f /usr/bin/python3)" ] && echo "$other"
	return 0
}
python_args() {
	for p in $(pythons); do printf ' --python %s' "$p"; done
}
# pyenv reaches its builds' scripts through shims: make kern-mcp's after an
# install, drop it after --uninstall (a stale shim would still be found).
pyenv_rehash() {
	root=$(pyenv root 2>/dev/null) || return 0
	case " $(pythons | tr '\n' ' ')" in
	*" $root/"*) pyenv rehash 2>/dev/null || echo "install.sh: note: pyenv rehash failed: run it yourself" ;;
	esac
}

if [ "$mode" = uninstall ]; then
	make -s uninstall PREFIX="$prefix"
	echo "kern removed from $prefix"
	[ -x /usr/bin/python3 ] && /usr/bin/python3 bindings/python/install-wheel uninstall \
		--prefix "$prefix" $(python_args)
	pyenv_rehash
	exit 0
fi

# Build, test and runtime dependencies, all from Debian's archive.
# The static build (mk/static.mk) compiles kern against musl (musl-tools,
# musl-dev) and builds mbedtls, zstd, zlib, libarchive, libcurl, libcap and
# libseccomp from Debian's source packages of the installed -dev versions: apt-get
# source (with its own deb-src list, checked with debian-archive-keyring),
# dpkg-source, patch, autoreconf, libtool; gperf for libseccomp's system
# call lookup.
build_deps="make gcc pkgconf libc6-dev libseccomp-dev libcap-dev libarchive-dev libcurl4-openssl-dev
 libmbedtls-dev libjsmn-dev zlib1g-dev libbz2-dev liblzma-dev libzstd-dev liblz4-dev libacl1-dev
 libxml2-dev musl-tools musl-dev linux-libc-dev dpkg-dev uidmap autoconf automake libtool patch file
 gperf debian-archive-keyring ca-certificates python3 python3-setuptools python3-wheel python3-build
 python3-installer"
# python3-matplotlib and python3-pandas: the rich-result tests of the Python
# package run them on the host image. GNU parallel: bats --jobs (tests/run
# runs two bats files at a time with it when KERN_BATS_JOBS=2).
test_deps="bats mandoc cppcheck clang-tidy clang libclang-rt-14-dev python3 python3-pytest umoci zstd
 docker-registry skopeo debootstrap busybox-static iproute2 openssl curl bubblewrap procps
 python3-matplotlib python3-pandas parallel"
# Node.js for the Node package (bindings/node) and the kern-mcp tests:
# Debian's nodejs when no node is on PATH (one from NodeSource or nvm is
# used as it is; npm below).
command -v node >/dev/null 2>&1 || test_deps="$test_deps nodejs"
# One dpkg-query for all of them: a second run of install.sh stays quick.
installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' $build_deps $test_deps 2>/dev/null |
	sed -n 's/^ii *//p' | tr '\n' ' ') "
missing=""
for p in $build_deps $test_deps; do
	case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
# The kern-mcp and Node package tests install their npm packages with npm:
# Debian's nodejs ships without it (NodeSource's nodejs package carries its
# own, and Debian's npm would conflict with that).
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

# kern_sandbox: a wheel built offline with Debian's setuptools (from a copy,
# so the checkout stays clean), installed with Debian's `installer`, never
# with pip into the system's site-packages (PEP 668): Debian's python3 gets
# it in $prefix/lib/python3.X/dist-packages (on its path for /usr/local),
# kern-mcp goes to $prefix/bin.
wheel_src=$(mktemp -d)
trap 'rm -rf "$wheel_src"' EXIT
cp -r bindings/python "$wheel_src/src"
mkdir -p build && rm -rf build/python
/usr/bin/python3 -m build --wheel --no-isolation --outdir build/python "$wheel_src/src" \
	>build/python-build.log 2>&1 || { echo "install.sh: building the Python wheel failed (build/python-build.log)" >&2; exit 1; }
/usr/bin/python3 bindings/python/install-wheel install build/python/kern_sandbox-*.whl \
	--prefix "$prefix" $(python_args)
pyenv_rehash
