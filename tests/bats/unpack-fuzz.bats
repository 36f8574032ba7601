#!/usr/bin/env bats
# FZ-2 and FZ-3: replay the checked-in corpus through the libFuzzer
# targets (ASan + UBSan) built by `make` when clang is present. `make fuzz`
# runs them for real.
load helper

FUZZ=$TREE/build/fuzz
CORPUS=$TREE/tests/fuzz/corpus

replay() {
	local name=$1
	[ -x "$FUZZ/$name" ] || skip "$name is not built (clang with libFuzzer is missing)"
	cd "$BATS_TEST_TMPDIR"
	# In a user namespace when we can, so a bug could not write as root.
	if unshare -Ur true 2>/dev/null; then
		run unshare -Ur "$FUZZ/$name" -runs=0 "$CORPUS/$name"
	else
		is_root && skip "no user namespace to replay $name in"
		run "$FUZZ/$name" -runs=0 "$CORPUS/$name"
	fi
	[ "$status" -eq 0 ] || { echo "$output" | tail -40; return 1; }
	[[ $output == *"Done "*" runs"* ]] || [[ $output == *"INITED"* ]]
}

@test "FZ-2: the member path guard agrees with an independent normaliser on the corpus [rootless]" {
	replay fuzz_member_path
}

@test "FZ-3: vetter, filter and extractor on the corpus: no crash, no write outside staging [rootless]" {
	replay fuzz_layer
}
