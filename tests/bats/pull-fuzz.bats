# Replays the checked-in corpus of the kern-pull fuzz targets (FZ-1 JSON
# and manifests, FZ-4 references and cache keys, FZ-7 WWW-Authenticate)
# through the ASan/UBSan builds `make check` makes when clang is present.
load helper

replay() {
	local f=$TREE/build/fuzz/$1 dir=$TREE/tests/fuzz/corpus/$1
	[ -x "$f" ] || skip "build/fuzz/$1 is not built (needs clang with libFuzzer: make fuzz)"
	[ -n "$(ls "$dir")" ]
	run "$f" -runs=0 "$dir"
	assert_status 0
	assert_line_re 'Done [0-9]+ runs|INITED'
}

@test "FZ-1: the JSON/manifest/config corpus replays clean under ASan and UBSan [rootless]" {
	replay pull_json
}

@test "FZ-4: the reference and cache-key corpus replays clean [rootless]" {
	replay pull_ref
}

@test "FZ-7: the WWW-Authenticate corpus replays clean [rootless]" {
	replay pull_wwwauth
}
