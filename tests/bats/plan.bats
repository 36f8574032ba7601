#!/usr/bin/env bats
# kern box --plan prints the applet chain; running it by hand behaves the
# same as kern box (mount table, environment, user, capabilities,
# listeners, exit codes: plan.bash). Both come from one config per step
# (lib/steps/), so each case here names a flag family whose config the
# plan must carry: binds, tmpfs and env; profiles (vcpu, vdisk, vgpio);
# capabilities; --user; egress.
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

@test "plan: the same with kern.toml profiles: vcpu caps, a vdisk tmpfs, a vgpio device [rootless]" {
	cfg=$BATS_TEST_TMPDIR/kern.toml
	printf '[[vcpu]]\nname = "small"\nmemory = "64m"\npids = 100\ncpus = "0.5"\n[[vdisk]]\nname = "scratch"\nsize = "8m"\n[[vgpio]]\nname = "dev"\ndevices = ["/dev/full"]\n' >"$cfg"
	compare_plan planp --image host --config "$cfg" vcpu:small vdisk:scratch vgpio:dev
	# What the two runs agreed on: the vdisk, the device, and / at half the
	# vcpu profile's memory cap.
	[[ $output == *"/vdisk/scratch tmpfs rw,nosuid,nodev,relatime,size=8192k"* ]]
	assert_line_re '^/dev/full devtmpfs '
	[ "$(grep -x '[0-9]* 4096' <<<"$output")" = "8192 4096" ]
	# The cgroup caps are not visible from inside a box on this host: the
	# chain's steps carry the profile's.
	plan=$("$KERN" box planp --image host --config "$cfg" vcpu:small --plan -- true)
	[[ $plan == *"kern-cg --name planp --memory 67108864 --pids-limit 100 --cpus 0.5 -- "* ]]
	[[ $plan == *"kern-wait --name planp "*" --memory 67108864 --pids-limit 100 --cpus 0.5 "* ]]
}

@test "plan: the same with --cap-drop and --cap-add, and with --security-profile untrusted [rootless]" {
	compare_plan planc --image host --cap-drop ALL --cap-add chown --cap-add NET_BIND_SERVICE
	assert_line_re $'^CapEff:\t0000000000000401$'
	# (quiet: kern box's banner has no line in the chain)
	KERN_QUIET=1 compare_plan plans --image host --security-profile untrusted --cap-add kill
	assert_line_re $'^CapEff:\t0000000000000020$'
	assert_line_re '^/ tmpfs ro,'
}

@test "plan: the same with --user: the image's user, and a non-root one [rootless]" {
	compare_plan planu --image host --user root
	if ! is_root && ! { grep -q "^$(id -un):" /etc/subuid && command -v newuidmap >/dev/null; }; then
		skip "no subordinate id range for $(id -un) (or no newuidmap): a non-root box user cannot be mapped"
	fi
	compare_plan planu --image host --user 1000:1000
	assert_line_re '^1000$'
	assert_line_re $'^CapEff:\t0000000000000000$'
}

@test "plan: the same with --egress-allow: the proxy's listener and variables [rootless]" {
	# (quiet: kern box's note on the route has no line in the chain)
	KERN_QUIET=1 compare_plan plane --image host --egress-allow test.example
	assert_line_re '^HTTPS_PROXY=http://127.0.0.1:3128$'
	# 127.0.0.1:3128, listening: the proxy's socket, made in the box's
	# network namespace.
	assert_line_re '^0100007F:0C38 0A$'
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

@test "plan: the chain's workload starts with the caller's signal mask, though PID 1 holds init's signals blocked through its execs [rootless]" {
	plan=$("$KERN" box cmask --image host --plan -- grep '^SigBlk:' /proc/self/status)
	# SIGUSR1 (10) and SIGWINCH (28): bits 9 and 27; USR1 is one init
	# forwards, WINCH one it does not.
	run /usr/bin/python3 -c "$MASK_EXEC" SIGUSR1,SIGWINCH /bin/sh -c "$plan"
	assert_status 0
	grep -Eqx 'SigBlk:[[:space:]]+0*8000200' <<<"$output" || { echo "$output"; return 1; }
	run /usr/bin/python3 -c "$MASK_EXEC" "" /bin/sh -c "$plan"
	assert_status 0
	grep -Eqx 'SigBlk:[[:space:]]+0+' <<<"$output" || { echo "$output"; return 1; }
}

@test "plan: a SIGTERM sent straight to the chain's PID 1 while kern-fs builds the root reaches the workload, as with kern box [rootless]" {
	# The chain from the test build: its phase hooks hold kern-fs.
	local bin=$KERN_T_BIN
	[ -x "$bin/kern-fs" ] || { echo "no test build's applet links in $bin (make links)"; return 1; }
	go=$BATS_TEST_TMPDIR/go err=$BATS_TEST_TMPDIR/err
	# The resume file is looked for after pivot_root: bound in.
	plan=$(PATH=$bin:$PATH kern box chterm --image host -v "$BATS_TEST_TMPDIR:$BATS_TEST_TMPDIR" --plan -- sleep 30)
	PATH=$bin:$PATH KERN_TEST_PAUSE=pid1-after-pivot KERN_TEST_RESUME=$go sh -c "$plan" 2>"$err" &
	kpid=$!
	wait_for "$err" "paused at pid1-after-pivot" 10
	# sh execs kern-cg, kern-ns and kern-wait in turn: PID 1 is the child
	# that is pid 1 of its own pid namespace (a root box's supervisor may
	# have a helper child too).
	local c pid1=
	for c in $(pgrep -P $kpid); do
		grep -Eq '^NSpid:[[:space:]]+[0-9]+[[:space:]]+1$' /proc/$c/status && pid1=$c
	done
	[ -n "$pid1" ] || { echo "PID 1 not found among $(pgrep -P $kpid | xargs)"; ps -ef --forest; return 1; }
	# Two execs (kern-seccomp, then init) still to come: the signal must
	# wait for init's handlers, not be dropped by the kernel.
	kill -TERM "$pid1"
	touch "$go"
	local i
	for i in $(seq 1 100); do kill -0 $kpid 2>/dev/null || break; sleep 0.05; done
	kill -0 $kpid 2>/dev/null && { echo "still running 5 s later: the signal was lost"; kill -KILL $kpid; return 1; }
	rc=0; wait $kpid || rc=$?
	[ "$rc" -eq 143 ] || { echo "rc $rc"; cat "$err"; return 1; }
	no_leftovers chterm
}
