#!/usr/bin/env bats
# The static release build (mk/static.mk): build/kern-static, what
# install.sh installs. `make check` builds it before the suite runs, from
# the deps cache ($KERN_DEPS_CACHE, default ~/.cache/kern-deps): the FIRST
# run on a machine pays for compiling its libraries from Debian's sources
# (about 4 minutes on 2 cores); later runs only compile kern and link. When the static build
# is impossible on this host the binary is missing and every test here
# fails (setup), it never skips.
load helper

STATIC=$TREE/build/kern-static
# `make install` needs the sources; tests/run runs the suite from a copy of
# build/ and tests/ and says where the sources are.
SRC=${KERN_SRC_TREE:-$TREE}

setup() {
	kern_private_dirs
	if [ ! -x "$STATIC" ]; then
		echo "$STATIC is missing: the static build failed (see build/static-build.log, or run make static)"
		return 1
	fi
}

teardown() {
	[ -z "${nss_tmp:-}" ] || rm -rf "$nss_tmp"
}

# The applet names, from the binary's own --help.
applets() { "$STATIC" --help | sed -n 's/^  kern-\([a-z]*\) .*/\1/p'; }

@test "static: build/kern-static is a stripped, statically linked executable with no interpreter [rootless]" {
	run file -b "$STATIC"
	assert_status 0
	[[ $output == *"statically linked"* ]]
	[[ $output == *", stripped"* ]]
	run readelf -lW "$STATIC"
	assert_status 0
	refute_line_re 'INTERP|Requesting program interpreter'
	run readelf -d "$STATIC"
	refute_line_re 'NEEDED'
}

@test "static: --version and --help from the static binary match the dynamic build, with an empty environment [rootless]" {
	run --separate-stderr env -i "$STATIC" --version
	assert_status 0
	[ -z "$stderr" ]
	[ "$output" = "$("$KERN" --version)" ]
	run --separate-stderr env -i "$STATIC" --help
	assert_status 0
	[ -z "$stderr" ]
	[ "$output" = "$("$KERN" --help)" ]
	assert_line_re '^  kern box +[a-z]'
}

@test "static: every applet dispatches through a kern-<applet> link to the static binary [rootless]" {
	mkdir "$BATS_TEST_TMPDIR/bin"
	local n=0
	for a in $(applets); do
		ln -s "$STATIC" "$BATS_TEST_TMPDIR/bin/kern-$a"
		run "$BATS_TEST_TMPDIR/bin/kern-$a" --help
		assert_status 0
		[ "$output" = "$("$KERN" "$a" --help)" ]
		n=$((n + 1))
	done
	[ "$n" -ge 8 ]
}

@test "static: a box runs from the static binary [rootless]" {
	run --separate-stderr "$STATIC" box static-box --image host -- /bin/sh -c 'echo "uid $(id -u) pid $$"; cat /proc/1/comm'
	assert_status 0
	[ "${lines[0]}" = "uid 0 pid 2" ]
	[ "${lines[1]}" = kern-static ]
}

# A static glibc would dlopen the NSS modules /etc/nsswitch.conf names
# (here libnss_systemd, for a uid /etc/passwd lacks) into the static
# process, which crashes it (SIGSEGV). The static build is linked with
# musl, which reads /etc/passwd, /etc/group and /etc/hosts itself and
# loads nothing; --uid-range makes kern look the uid up with getpwuid().
@test "static: a uid missing from /etc/passwd with 'passwd: files systemd' loads no NSS module and the box runs" {
	require_root
	# Uid 4242 must reach its runtime dir (bats' tmp dirs are root-only);
	# teardown removes it.
	nss_tmp=$(mktemp -d /tmp/kern-static-nss.XXXXXX)
	local d=$nss_tmp
	chmod 755 "$d"
	printf 'passwd: files systemd\ngroup: files systemd\nhosts: files systemd dns\n' >"$d/nsswitch.conf"
	mkdir -m 700 "$d/run4242" && chown 4242:4242 "$d/run4242"
	run --separate-stderr unshare -m sh -c 'mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf && cd / &&
		exec env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$1/run4242" setpriv --reuid=4242 --regid=4242 --clear-groups \
		"$2" box nss-box --image host --uid-range -- /bin/echo inside' sh "$d" "$STATIC"
	assert_status 0
	[ "$output" = inside ]
	[[ $stderr == *"no subordinate id range for uid 4242"* ]]
}

@test "static: make install DESTDIR= installs the static binary, the kern-<applet> links and the man pages; uninstall removes them" {
	[ -f "$SRC/Makefile" ] || { echo "no Makefile in $SRC: set KERN_SRC_TREE to the source tree"; return 1; }
	local dest=$BATS_TEST_TMPDIR/dest
	# Not the caller's make job server (make check runs this suite).
	run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$SRC" install DESTDIR="$dest" PREFIX=/usr
	assert_status 0
	cmp "$dest/usr/bin/kern" "$SRC/build/kern-static"
	[[ $(file -b "$dest/usr/bin/kern") == *"statically linked"* ]]
	for a in $(applets); do
		[ "$(readlink "$dest/usr/bin/kern-$a")" = kern ]
	done
	run "$dest/usr/bin/kern-ns" --help
	assert_status 0
	assert_line_re '^usage: kern(-| )ns'
	for m in "$SRC"/man/*.1; do
		[ -f "$dest/usr/share/man/man1/${m##*/}" ]
	done
	run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$SRC" uninstall DESTDIR="$dest" PREFIX=/usr
	assert_status 0
	[ -z "$(find "$dest" ! -type d)" ]
}
