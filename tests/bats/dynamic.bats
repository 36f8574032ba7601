#!/usr/bin/env bats
# The dynamic build (`make`, build/kern) starts like the static one
# (issue 16): libcurl, libarchive, libmbedcrypto, zlib and libzstd, which
# only pull, load, unpack and login use, and libseccomp, which only
# kern-oci's create of a bundle with its own profile uses, are opened on
# first use
# (lib/lazy/lazylib.h), never by the loader at start. pull.bats checks
# that a pull with this build opens them and works, oci.bats that a
# profile compiles through it.
load helper

setup() {
	kern_private_dirs
	file -L "$KERN_DYN" | grep -q 'dynamically linked' || skip "$KERN_DYN is not the dynamic build"
}

teardown() {
	"$KERN_DYN" stop dyn1 >/dev/null 2>&1 || true
}

@test "issue 16: the dynamic kern links none of libcurl, libarchive, libmbedcrypto, zlib, libzstd and libseccomp, and a running box's supervisor maps none [rootless]" {
	run readelf -d "$KERN_DYN"
	assert_status 0
	assert_line_re 'NEEDED.*\[libc\.so\.6\]'
	refute_line_re 'NEEDED.*\[lib(curl|archive|mbedcrypto|z|zstd|seccomp)\.'
	run "$KERN_DYN" box dyn1 -d --allow-uncapped --image host -- sleep 30
	assert_status 0
	sup=$("$KERN_DYN" ps --json --filter name=dyn1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["pid"])')
	run cat "/proc/$sup/maps"
	assert_status 0
	# The supervisor is the `kern box` process itself, past the whole
	# start; PID 1 is its fork. The check sees shared libraries at all:
	assert_line_re '/libc\.so\.6$'
	refute_line_re '/lib(curl|archive|mbedcrypto|z|zstd|seccomp)\.so'
	run "$KERN_DYN" stop dyn1
	assert_status 0
}

@test "issue 16: the dynamic kern carries libcap in (its archive, where the system has one): the loader maps only the C library at start [rootless]" {
	a=$(${CC:-cc} -print-file-name=libcap.a)
	case $a in
	/*) ;;
	*) skip "no libcap.a on this system (libcap-dev without its archive): the build links libcap.so" ;;
	esac
	run readelf -d "$KERN_DYN"
	assert_status 0
	refute_line_re 'NEEDED.*\[libcap\.'
	# And capabilities still work through it: the same bounding set as
	# the test build's box, without CAP_SYS_ADMIN (bit 21).
	run "$KERN_DYN" box dyn1 --allow-uncapped --image host -- sh -c 'grep CapBnd /proc/self/status'
	assert_status 0
	dyn=${lines[0]##*[[:space:]]}
	run "$KERN" box dyn1 --allow-uncapped --image host -- sh -c 'grep CapBnd /proc/self/status'
	assert_status 0
	[ "$dyn" = "${lines[0]##*[[:space:]]}" ] || { echo "dynamic $dyn, test build ${lines[0]}"; false; }
	[ $(( 0x$dyn >> 21 & 1 )) = 0 ] || { echo "CAP_SYS_ADMIN in $dyn"; false; }
}
