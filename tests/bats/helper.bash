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
	export XDG_RUNTIME_DIR=$BATS_FILE_TMPDIR/run XDG_CACHE_HOME=$BATS_FILE_TMPDIR/cache
	export XDG_CONFIG_HOME=$BATS_FILE_TMPDIR/config XDG_DATA_HOME=$BATS_FILE_TMPDIR/data
	mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
}

is_root() { [ "$(id -u)" = 0 ]; }
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
