#!/usr/bin/env bats
# kern box --plan prints the applet chain; running it by hand behaves the
# same as kern box (mount table, environment, exit codes).
load helper
load plan

setup() { kern_private_dirs; }

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
	[ -x "$TREE/build/kern-static" ] || skip "no static build (make static); a dynamic kern cannot exec itself inside a root without its loader"
	use_static_chain
	r=$(mkrootfs)
	compare_plan planr --rootfs "$r" --label a=b
}

@test "plan: the same with --memory, --disk and a vdisk profile, on an overlay (static kern) [rootless]" {
	[ -x "$TREE/build/kern-static" ] || skip "no static build (make static); a dynamic kern cannot exec itself inside a root without its loader"
	use_static_chain
	r=$(mkrootfs)
	cfg=$BATS_TEST_TMPDIR/kern.toml
	printf '[[vdisk]]\nname = "scratch"\nsize = "8m"\n' >"$cfg"
	compare_plan planm --rootfs "$r" --memory 96m --config "$cfg" vdisk:scratch
	[[ $output == *"/vdisk/scratch tmpfs rw,nosuid,nodev,relatime,size=8192k"* ]]
	[ "$(grep -x '[0-9]* 4096' <<<"$output")" = "12288 4096" ]
	compare_plan planm --rootfs "$r" --disk 40m
	[ "$(grep -x '[0-9]* 4096' <<<"$output")" = "10240 4096" ]
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

@test "plan: a registry image not in the cache is refused with exit 1, nothing printed or pulled [rootless]" {
	run --separate-stderr "$KERN" box planimg --image 127.0.0.1:9/none:1 --plan -- true
	assert_status 1
	[ -z "$output" ]
	[ "$stderr" = "error: image: image '127.0.0.1:9/none:1' is not in the cache and --plan never pulls
hint: run \`kern pull 127.0.0.1:9/none:1\` first" ]
	[ ! -e "${XDG_CACHE_HOME:-/nonexistent}/kern/images" ] || [ -z "$(ls -A "$XDG_CACHE_HOME/kern/images")" ]
}
