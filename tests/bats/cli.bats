#!/usr/bin/env bats
# CLI-1, CLI-2 and the dispatch rules of box-cli.md §1.
load helper

setup() { kern_private_dirs; }

@test "CLI-1: kern --version prints 'kern X.Y.Z' >= 0.30.2 and exits 0 [rootless]" {
	run --separate-stderr "$KERN" --version
	assert_status 0
	[ -z "$stderr" ]
	line=${lines[0]}
	[[ $line =~ ^kern\ ([0-9]+)\.([0-9]+)\.([0-9]+) ]]
	v=$(printf '%05d%05d%05d' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
	[ "$v" \> "$(printf '%05d%05d%05d' 0 30 1)" ]
}

@test "kern --version touches nothing: no runtime or cache dir appears [rootless]" {
	rm -rf "$XDG_RUNTIME_DIR"
	run "$KERN" --version
	assert_status 0
	[ ! -e "$XDG_RUNTIME_DIR" ] && [ ! -e "$XDG_CACHE_HOME" ]
}

@test "kern --version with an extra argument is a usage error [rootless]" {
	run "$KERN" --version x
	assert_status 1
	assert_line_re '^error: box: '
}

@test "kern --help lists every command and applet with one line each [rootless]" {
	run "$KERN" --help
	assert_status 0
	for c in box exec ps stop recover pull load images rmi gc login doctor; do
		assert_line_re "^  kern $c +[a-z]"
	done
	for a in pull unpack cg egress ns wait fs seccomp; do
		assert_line_re "^  kern-$a +[a-z]"
	done
}

@test "applets dispatch on argv[0] through the symlink and as 'kern <applet>' [rootless]" {
	for a in pull unpack cg egress ns wait fs seccomp; do
		run "$TREE/build/bin/kern-$a" --help
		assert_status 0
		assert_line_re "^usage: kern(-| )$a"
		via_link=$output
		run "$KERN" "$a" --help
		assert_status 0
		[ "$output" = "$via_link" ]
	done
}

@test "an unknown command exits 1 with an error: line and a hint [rootless]" {
	run --separate-stderr "$KERN" frobnicate
	assert_status 1
	[ -z "$output" ]
	[[ ${stderr_lines[0]} == "error: box: unknown command 'frobnicate'" ]]
	[[ ${stderr_lines[1]} == hint:* ]]
}

@test "kern with no arguments prints usage on stderr and exits 1 [rootless]" {
	run --separate-stderr "$KERN"
	assert_status 1
	[ -z "$output" ]
	[[ $stderr == usage:* ]]
}
