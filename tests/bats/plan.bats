#!/usr/bin/env bats
# kern box --plan prints the applet chain; running it by hand behaves the
# same as kern box (mount table, environment, exit codes).
load helper

setup() { kern_private_dirs; }

# Mount point, type and options of every mount, as the box sees them.
# Overlay options name the lower, upper and work directories by descriptor
# number, which differs between the two runs: compare without the numbers.
probe='awk "{print \$2, \$3, \$4}" /proc/self/mounts | sed "s|/proc/self/fd/[0-9]*|fd|g"; echo ---; env | sort; echo ---; id -u; hostname; pwd; exit 7'

compare_plan() {
	run "$KERN" box "$@" -- sh -c "$probe"
	assert_status 7
	direct=$output
	plan=$("$KERN" box "$@" --plan -- sh -c "$probe")
	[[ $plan == *kern-cg*kern-ns*kern-wait*kern-fs*kern-seccomp* ]]
	run sh -c "$plan"
	assert_status 7
	[ "$output" = "$direct" ] || { diff <(echo "$direct") <(echo "$output"); return 1; }
}

@test "plan: the printed chain runs like kern box on the host image [rootless]" {
	compare_plan planh --image host
}

@test "plan: the same with --ro, binds, tmpfs, env, workdir [rootless]" {
	mkdir -p "$BATS_TEST_TMPDIR/ws"
	printf 'FROMFILE=1\n' >"$BATS_TEST_TMPDIR/env"
	compare_plan planb --image host --ro -v "$BATS_TEST_TMPDIR/ws:/workspace" --tmpfs /tmp:16m \
		-e A=1 --env-file "$BATS_TEST_TMPDIR/env" -w /workspace --hostname chained
}

@test "plan: the same on a --rootfs overlay (static kern) [rootless]" {
	# After pivot_root the chain execs kern from its descriptor; a dynamic
	# kern would need its ELF loader inside the box root, so this runs the
	# static release binary.
	[ -x "$TREE/build/kern-static" ] || skip "no static build (make static); a dynamic kern cannot exec itself inside a root without its loader"
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	for a in kern kern-cg kern-ns kern-wait kern-fs kern-seccomp; do ln -s "$TREE/build/kern-static" "$BATS_TEST_TMPDIR/bin/$a"; done
	PATH=$BATS_TEST_TMPDIR/bin:$PATH KERN=$BATS_TEST_TMPDIR/bin/kern
	r=$(mkrootfs)
	compare_plan planr --rootfs "$r" --label a=b
}

@test "plan: one step per line, secrets from --env-file never inline [rootless]" {
	printf 'TOKEN=s3cr3t\n' >"$BATS_TEST_TMPDIR/env"
	run "$KERN" box plans --image host --env-file "$BATS_TEST_TMPDIR/env" --plan -- true
	assert_status 0
	[[ $output != *s3cr3t* ]]
	assert_line_re '^exec 3<'
	assert_line_re '^exec kern-cg '
	assert_line_re '^  kern-ns'
	assert_line_re '^  kern-wait '
	assert_line_re '^  kern-fs '
	assert_line_re '^  kern-seccomp .*--env-file /proc/self/fd/3'
	rt=$(runtime_dir)
	[ ! -e "$rt/instances/plans" ]
}

@test "plan: a registry image is refused with exit 1 and one error: box: line, nothing printed or pulled [rootless]" {
	run --separate-stderr "$KERN" box planimg --image 127.0.0.1:9/none:1 --plan -- true
	assert_status 1
	[ -z "$output" ]
	[ "$stderr" = "error: box: --plan is not available for registry images yet; use --image host or --rootfs" ]
	[ ! -e "${XDG_CACHE_HOME:-/nonexistent}/kern/images" ] || [ -z "$(ls -A "$XDG_CACHE_HOME/kern/images")" ]
}
