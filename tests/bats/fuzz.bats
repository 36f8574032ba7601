#!/usr/bin/env bats
# Every libFuzzer target of security-tests.md §11 replays its checked-in
# corpus and its regressions (crash inputs found by `make fuzz`, kept in
# tests/fuzz/regressions/NAME) through its ASan and UBSan build, which
# `make check` makes when clang is present (mk/fuzz.mk): no crash, no
# sanitizer report, no broken property, every input run.
load helper

FUZZ=$TREE/build/fuzz

replay() {
	[ -x "$FUZZ/$1" ] || skip "build/fuzz/$1 is not built (needs clang with libFuzzer; make check builds it then)"
	run "$TREE/tests/fuzz/run" --replay "$FUZZ/$1"
	assert_status 0
	assert_line_re "^fuzz $1: replayed [0-9]+ inputs clean$"
}

@test "FZ-1: JSON, manifests, indexes, configs and token bodies (pull_json) replay clean [rootless]" {
	replay pull_json
}

@test "FZ-1/FZ-5: an image config into sidecar, environment and --user in the image's passwd (image_config) replays clean [rootless]" {
	replay image_config
}

@test "FZ-2: the member path guard agrees with an independent normaliser (fuzz_member_path) [rootless]" {
	replay fuzz_member_path
}

@test "FZ-3: vetter, filter and extractor: no crash, no write outside staging (fuzz_layer) [rootless]" {
	replay fuzz_layer
}

@test "FZ-4: references and cache keys (pull_ref) replay clean [rootless]" {
	replay pull_ref
}

@test "FZ-5: --mount, -v, --tmpfs, sizes, --cpus, caps, --ulimit, --user, env-file lines (cli) replay clean [rootless]" {
	replay cli
}

@test "FZ-5: kern.toml (toml) replays clean and round-trips [rootless]" {
	replay toml
}

@test "FZ-6: the egress request head and authority never admit a host the matcher rejects (egress_head) [rootless]" {
	replay egress_head
}

@test "FZ-7: WWW-Authenticate and the realm host (pull_wwwauth) replay clean [rootless]" {
	replay pull_wwwauth
}

@test "FZ-8: the seccomp programs agree with the reference table (seccomp_bpf) [rootless]" {
	replay seccomp_bpf
}

@test "fuzz: box records read back by ps, exec and stop (box_record) replay clean and round-trip [rootless]" {
	replay box_record
}

@test "fuzz: kern-oci's config.json and process.json reader (oci_config) replays clean [rootless]" {
	replay oci_config
}

@test "fuzz: every target in tests/fuzz is built by make fuzz, has a corpus and is replayed here [rootless]" {
	src=${KERN_SRC_TREE:-$TREE}
	[ -f "$src/mk/fuzz.mk" ] || skip "no source tree with mk/fuzz.mk (KERN_SRC_TREE)"
	# FUZZ_ALL's value, continuation lines joined.
	all=$(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$src/mk/fuzz.mk" | sed -n 's/^FUZZ_ALL *:= *//p')
	n=0
	for c in "$TREE"/tests/fuzz/*.c; do
		name=$(basename "$c" .c)
		n=$((n + 1))
		[[ " $all " == *" $name "* ]] || { echo "$name is not in FUZZ_ALL (mk/fuzz.mk)"; return 1; }
		[ -n "$(ls -A "$TREE/tests/fuzz/corpus/$name" 2>/dev/null)" ] || { echo "$name has no corpus"; return 1; }
		grep -q "^	replay $name\$" "$BATS_TEST_FILENAME" || { echo "$name is not replayed here"; return 1; }
		if command -v clang >/dev/null; then
			[ -x "$FUZZ/$name" ] || { echo "clang is here but build/fuzz/$name was not built"; return 1; }
		fi
	done
	[ "$n" -eq "$(wc -w <<<"$all")" ] || { echo "FUZZ_ALL names a target without a source"; return 1; }
	# Every regression directory belongs to a target.
	for d in "$TREE"/tests/fuzz/regressions/*/; do
		[ -d "$d" ] || continue
		[ -f "$TREE/tests/fuzz/$(basename "$d").c" ] || { echo "regressions for no target: $d"; return 1; }
	done
}
