# Shared by every bats file: where the binary is, private state dirs per
bats_require_minimum_version 1.5.0
# test file, and small assertions. Tests named "[rootless]" run a second
# time as the unprivileged test user (tests/run).

TREE=${KERN_TEST_TREE:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
KERN=$TREE/build/kern
PATH=$TREE/build/bin:$PATH
export PATH

# Each file gets its own runtime, cache, config and data directories so
# files never see each other's boxes; tests that check the no-XDG fallback
# unset them explicitly.
kern_private_dirs() {
	nouserns_pass_skip
	export XDG_RUNTIME_DIR=$BATS_FILE_TMPDIR/run XDG_CACHE_HOME=$BATS_FILE_TMPDIR/cache
	export XDG_CONFIG_HOME=$BATS_FILE_TMPDIR/config XDG_DATA_HOME=$BATS_FILE_TMPDIR/data
	mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
}

is_root() { [ "$(id -u)" = 0 ]; }
# writable_by_box PATH...: directories and files a test binds for its
# workload to write, writable by any uid: in the no-userns pass the
# workload is uid 65534, not the caller (nouserns_pass.bash).
writable_by_box() { chmod a+rwX "$@"; }
# Box root's host uid and gid: the caller's own, except for root, whose
# boxes map it to the first id of root's /etc/subuid and /etc/subgid rows,
# else of kern's default range (isolation.md §3, id maps).
box_root_uid() { box_root_id /etc/subuid "$(id -u)"; }
box_root_gid() { box_root_id /etc/subgid "$(id -g)"; }
box_root_id() {
	is_root || { echo "$2"; return; }
	if grep -q '^root:' /etc/subuid 2>/dev/null && grep -q '^root:' /etc/subgid 2>/dev/null; then
		awk -F: '$1 == "root" {print $2; exit}' "$1"
	else
		echo 2130706432
	fi
}
require_root() { is_root || skip "needs root (this run is as $(id -un))"; }
require_rootless() { is_root && skip "needs an unprivileged user (this run is as root)"; return 0; }

# assert_line_re REGEX: some line of $output matches.
assert_line_re() {
	grep -Eq -- "$1" <<<"$output" || { echo "no line matches /$1/ in:"; echo "$output"; return 1; }
}
refute_line_re() {
	! grep -Eq -- "$1" <<<"$output" || { echo "a line matches /$1/ in:"; echo "$output"; return 1; }
}
assert_status() {
	[ "$status" -eq "$1" ] || { echo "status $status, expected $1; output:"; echo "$output"; return 1; }
}

KERN_T=$TREE/build/test/kern	# the test build: phase hooks compiled in
KERN_T_BIN=$TREE/build/test/bin	# its kern and kern-<applet> links (an applet chain)
# The dynamic release build (`make`): tests/run puts the static one in
# build/kern's place and keeps this one as build/kern-dynamic.
KERN_DYN=$TREE/build/kern-dynamic
[ -x "$KERN_DYN" ] || KERN_DYN=$TREE/build/kern

# The no-userns pass (tests/helpers/nouserns-pass): every kern, the test
# and dynamic builds and the applets on PATH run in its chroot through
# wrappers, and the tests that cannot apply there skip (nouserns_pass.bash).
if [ -n "${KERN_TEST_CHROOT:-}" ]; then
	KERN=$KERN_TEST_CHROOT_BIN/kern
	KERN_T=$KERN_TEST_CHROOT_BIN/kern-test
	KERN_T_BIN=$KERN_TEST_CHROOT_BIN/test-bin
	KERN_DYN=$KERN_TEST_CHROOT_BIN/kern-dynamic
	[ -x "$KERN_DYN" ] || KERN_DYN=$KERN
	PATH=$KERN_TEST_CHROOT_BIN/bin:$PATH
	# shellcheck source=tests/bats/nouserns_pass.bash
	. "$BATS_TEST_DIRNAME/nouserns_pass.bash"
else
	nouserns_pass_skip() { :; }
fi

# A tiny root filesystem from busybox-static, built once per test file.
mkrootfs() {
	local r=${1:-$BATS_FILE_TMPDIR/rootfs}
	[ -x "$r/bin/busybox" ] && { echo "$r"; return; }
	local bb
	bb=$(command -v busybox || echo /bin/busybox)
	[ -x "$bb" ] || { echo "busybox-static is not installed" >&2; return 1; }
	mkdir -p "$r"/bin "$r"/etc "$r"/tmp "$r"/root
	cp "$bb" "$r/bin/busybox"
	for a in sh ls cat echo id true false sleep touch mkdir rm hostname env grep wc head \
		 printf kill ps stat mount test sed tr cut dd seq od chmod ln readlink; do
		ln -sf busybox "$r/bin/$a"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\napp:x:1000:1000:app:/home/app:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\napp:x:1000:\nstaff:x:50:app\n' >"$r/etc/group"
	chmod 1777 "$r/tmp"
	echo "$r"
}

# outcome FILE: the bytes kern wrote on KERN_STARTED_FD, as "b0 b1 b2 b3".
outcome() { od -An -tu1 "$1" | tr -s ' ' | sed 's/^ //;s/ $//'; }

# python3 -c "$MASK_EXEC" MASK CMD...: CMD run with exactly the signals
# MASK blocked (Python signal names, comma separated; "" for none), as a
# caller that blocks them would.
MASK_EXEC='
import os, signal, sys
names = [n for n in sys.argv[1].split(",") if n]
signal.pthread_sigmask(signal.SIG_SETMASK, {getattr(signal, n) for n in names})
os.execv(sys.argv[2], sys.argv[2:])'

# no_leftovers NAME: nothing of box NAME remains: record, scratch, process.
no_leftovers() {
	local name=$1 rt
	rt=$(runtime_dir)
	[ ! -e "$rt/instances/$name" ] || { echo "record left: $rt/instances/$name"; return 1; }
	! ls -d "$rt/scratch/$name"-* >/dev/null 2>&1 || { echo "scratch left"; ls -la "$rt/scratch"; return 1; }
	! "$KERN" ps -q | grep -qx "$name" || { echo "still listed"; return 1; }
}

# The runtime directory kern picks (xdg.c; ignores squatted candidates).
runtime_dir() {
	local u
	u=$(id -u)
	if [ -n "${XDG_RUNTIME_DIR:-}" ]; then echo "$XDG_RUNTIME_DIR/kern";
	elif [ -w "/run/user/$u" ]; then echo "/run/user/$u/kern";
	elif [ "$u" = 0 ] && [ "$(stat -f -c %T /run)" = tmpfs ]; then echo /run/kern;
	else echo "/dev/shm/kern-$u"; fi
}

# wait_for FILE REGEX [SECONDS]: poll until a line of FILE matches.
wait_for() {
	local i
	for i in $(seq 1 $((${3:-10} * 20))); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "timed out waiting for /$2/ in $1:"; cat "$1"; return 1
}
