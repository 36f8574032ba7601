#!/usr/bin/env bats
# FZ-6: the egress request-head and authority parser's libFuzzer target
# (tests/fuzz/egress_head.c, built by mk/egress.mk with ASan and UBSan)
# replays its checked-in corpus: no crash, and the proxy's decision never
# admits a host the reference matcher rejects.
load helper

@test "FZ-6: the egress head parser's fuzz corpus replays clean [rootless]" {
	fuzz=$TREE/build/fuzz/egress_head
	[ -x "$fuzz" ] || skip "build/fuzz/egress_head was not built (needs clang with libFuzzer)"
	corpus=("$TREE"/tests/fuzz/corpus/egress_head/*)
	[ "${#corpus[@]}" -ge 100 ]
	run "$fuzz" -runs=0 "${corpus[@]}"
	assert_status 0
	refute_line_re 'ERROR|property broken'
	[ "$(grep -c '^Executed ' <<<"$output")" -eq "${#corpus[@]}" ]
}
