#!/usr/bin/env bats
# Every example under examples/ runs and does what it says.
load helper

setup() { kern_private_dirs; }

@test "examples/hello.sh prints 42 [rootless]" {
	run "$TREE/examples/hello.sh"
	assert_status 0
	[ "$output" = 42 ]
}

@test "examples/ci-step.sh runs a build step on a read-only source [rootless]" {
	src=$BATS_TEST_TMPDIR/src; mkdir -p "$src"
	printf 'check:\n\t@echo built > /out/result; cat /out/result; touch /src/x 2>/dev/null || echo src-is-ro\n' >"$src/Makefile"
	command -v make >/dev/null || skip "make is not installed"
	run "$TREE/examples/ci-step.sh" "$src"
	assert_status 0
	[ "${lines[0]}" = built ]
	[ "${lines[1]}" = src-is-ro ]
}

@test "examples/resident.sh starts, execs into, lists and stops a box [rootless]" {
	run "$TREE/examples/resident.sh"
	assert_status 0
	assert_line_re '^inside resident-[0-9]+, pid [0-9]+$'
	assert_line_re '^hi from exec$'
	assert_line_re '"purpose": *"example"'
	[ -z "$("$KERN" ps -q)" ]
}

@test "examples/plan.sh runs the printed chain [rootless]" {
	run "$TREE/examples/plan.sh"
	assert_status 0
	assert_line_re '^hello from chained$'
	assert_line_re '^the chain exited 3$'
}
