#!/usr/bin/env bats
# Resource caps, OOM and cgroup hygiene (security-tests.md section 5,
# CG-1..CG-13; isolation.md §7), on real boxes. Hybrid/v1 hosts run the v1
# rows for real; pure v2 rows run where /sys/fs/cgroup is cgroup2 and skip
# (saying why) elsewhere. Every test ends by checking that no cgroup of its
# box is left in any hierarchy.
load helper

setup() {
	kern_private_dirs
	H=$TREE/build/helpers
	N=cg$BATS_TEST_NUMBER-$$
	BYTES=$BATS_TEST_TMPDIR/bytes
	: >"$BYTES"
}

teardown() {
	local left
	# A runtime directory made for an unprivileged uid (uid_runtime).
	[ -z "${UID_RT:-}" ] || rm -rf "$UID_RT"
	left=$(box_dirs)
	[ -z "$left" ] || { echo "cgroups left behind: $left"; return 1; }
}

# Every directory of this test's box, in any hierarchy and any parent.
box_dirs() {
	find /sys/fs/cgroup -maxdepth 5 -type d -name "kern-box-$N-*" 2>/dev/null || true
}

# kern box with the outcome bytes in $BYTES and the helpers at /h.
box() {
	KERN_STARTED_FD=3 "$KERN" box "$N" --image host -v "$H:/h:ro" "$@" 3>"$BYTES"
}
bytes() { od -An -tu1 "$BYTES" | xargs; }

is_v2() { [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; }
has_v1() { awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { f = 1 } END { exit !f }' /proc/self/mountinfo; }
require_v1() { has_v1 || skip "no cgroup v1 memory hierarchy on this host"; }
# Caps bind for this run: root on v1/v2, or a delegated cgroup.
caps_bind() {
	run "$H/cg-run" --allow-uncapped --show
	[[ $output == *"enforced: memory pids"* ]]
}
require_caps() { caps_bind || skip "memory and pids caps cannot be placed for $(id -un) here"; }

# The host-side box dir of controller $1 (v1) while the box runs.
v1_dir() {
	find "/sys/fs/cgroup/$1" -maxdepth 3 -type d -name "kern-box-$N-*" 2>/dev/null | head -1
}
wait_for_dir() {
	for _ in $(seq 100); do
		[ -n "$(v1_dir "$1")" ] && return 0
		sleep 0.05
	done
	echo "no $1 cgroup appeared for $N"
	return 1
}

# Run "$@" as root with every cgroup mount read-only, in a private mount
# namespace: the controllers exist but kern can place the box nowhere.
with_readonly_cgroups() {
	unshare -m sh -c 'for m in $(awk '\''$9 == "cgroup" || $9 == "cgroup2" {print $5}'\'' /proc/self/mountinfo); do
		mount -o remount,bind,ro "$m" || exit 99; done; exec "$@"' sh "$@"
}
# ... and with no cgroup mounted at all (no memory controller anywhere).
with_no_cgroups() {
	unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup || exit 99; exec "$@"' sh "$@"
}

@test "CG-13: v1: memory (swap 0), pids and cpu are written, read back and in force; byte1 1; the supervisor stays outside [rootless]" {
	require_caps
	require_v1
	KERN_STARTED_FD=3 "$KERN" box "$N" --image host -v "$H:/h:ro" --memory 100m --pids-limit 50 \
		--cpus 0.5 -- /h/cg-hog sleep "$N" 3>"$BYTES" &
	sup=$!
	wait_for_dir memory && wait_for_dir pids && wait_for_dir cpu
	m=$(v1_dir memory) p=$(v1_dir pids) c=$(v1_dir cpu)
	[ "$(cat "$m/memory.limit_in_bytes")" = 104857600 ]
	if [ -e "$m/memory.memsw.limit_in_bytes" ]; then
		[ "$(cat "$m/memory.memsw.limit_in_bytes")" = 104857600 ]
	fi
	[ "$(cat "$m/memory.swappiness")" = 0 ]
	grep -qx 'oom_kill_disable 0' "$m/memory.oom_control"
	[ "$(cat "$p/pids.max")" = 50 ]
	[ "$(cat "$c/cpu.cfs_quota_us")" = 50000 ]
	[ "$(cat "$c/cpu.cfs_period_us")" = 100000 ]
	# The tasks live one level below the caps, in <box>/box.
	for _ in $(seq 50); do [ -n "$(cat "$m/box/cgroup.procs")" ] && break; sleep 0.05; done
	[ -n "$(cat "$m/box/cgroup.procs")" ]
	[ -n "$(cat "$p/box/cgroup.procs")" ]
	[ -z "$(cat "$m/cgroup.procs")" ]
	# The supervisor (the kern process) is in none of the box cgroups.
	! grep -q "kern-box-" "/proc/$sup/cgroup" || false
	pkill -KILL -f "^/h/cg-hog sleep $N"
	wait "$sup" || true
	[ "$(bytes)" = "1 1 0 9" ]
}

@test "v1, root: a parent with oom_kill_disable 1 does not pass it on: the box's own reads 0 (kern writes it), the OOM kill happens, byte1 1" {
	require_caps
	require_v1
	[ "$(id -u)" = 0 ] || skip "needs root: it changes the parent kern places root's boxes under"
	box -- true
	par=$(find /sys/fs/cgroup/memory -maxdepth 2 -type d -name kern | head -1)
	[ -n "$par" ] && [ -w "$par/memory.oom_control" ] || skip "no kern parent with a writable memory.oom_control"
	# A new memory cgroup inherits its parent's flag; any box started
	# meanwhile by another test is fixed the same way.
	echo 1 >"$par/memory.oom_control"
	# Were it still set, the hog would wait at the cap until the deadline.
	run --separate-stderr box --memory 32m --timeout 20 -- /h/cg-hog mem 200
	echo 0 >"$par/memory.oom_control"
	assert_status 137
	[[ $stderr == *"OOM killer against this box's own memory cap"* ]]
	[ "$(bytes)" = "1 1 1 9" ]
}

@test "CG-2: 200 MiB under --memory 32m with a sleeping child: 137, byte2 1, the OOM sentence, no survivor [rootless]" {
	require_caps
	run --separate-stderr box --memory 32m -- sh -c "/h/cg-hog sleep $N & /h/cg-hog mem 200; wait"
	assert_status 137
	[[ $stderr == *"kern: the workload was killed by the kernel's OOM killer against this box's own memory cap."* ]]
	[ "$(bytes)" = "1 1 1 9" ]
	! pgrep -f "^/h/cg-hog sleep $N" || false
}

@test "CG-3: ./hog || echo handled under --memory 128m still ends 137 with byte2 1 (v1: kern's group kill) [rootless]" {
	require_caps
	run --separate-stderr box --memory 128m -- sh -c '/h/cg-hog mem 400 || echo handled'
	assert_status 137
	[[ $stderr == *"killed by the kernel's OOM killer"* ]]
	[ "$(bytes)" = "1 1 1 9" ]
}

@test "CG-4: 200 MiB written to /dev/shm under --memory 128m is an OOM kill (tmpfs pages are charged) [rootless]" {
	require_caps
	run --separate-stderr box --memory 128m -- /h/cg-hog file /dev/shm/fill 200
	assert_status 137
	[[ $stderr == *"killed by the kernel's OOM killer"* ]]
	[ "$(bytes)" = "1 1 1 9" ]
}

@test "CG-4: the same 200 MiB into a 64m --tmpfs /tmp is ENOSPC and the box lives [rootless]" {
	run --separate-stderr box --memory 128m --tmpfs /tmp:64m --allow-uncapped -- \
		sh -c '/h/cg-hog file /tmp/fill 200; echo "status $?"; echo alive'
	assert_status 0
	[[ $output == *"ENOSPC after 64 MiB"* ]]
	[[ $output == *"status 28"* ]]
	[[ $output == *alive* ]]
	[ "$(bytes | cut -d' ' -f1,3,4)" = "1 0 0" ]
}

@test "CG-5: --memory 64m with the clients' default /tmp:32m: ENOSPC at 32 MiB, box alive [rootless]" {
	run box --memory 64m --tmpfs /tmp:32m --allow-uncapped -- sh -c '/h/cg-hog file /tmp/x 100; echo alive'
	assert_status 0
	[[ $output == *"ENOSPC after 32 MiB"* ]] && [[ $output == *alive* ]]
}

# The size of the box's / in bytes, as the box sees it.
root_size() { "$KERN" box "$N" --allow-uncapped "$@" -- sh -c 'echo $(( $(stat -f -c "%b * %S" /) ))'; }

@test "OT-7: the writable root is capped at half the memory cap by default, --disk sets it, for an image root and --image host [rootless]" {
	r=$(mkrootfs)
	mib=$((1 << 20))
	[ "$(root_size --rootfs "$r")" = $((256 * mib)) ]
	[ "$(root_size --image host)" = $((256 * mib)) ]
	[ "$(root_size --rootfs "$r" --memory 128m)" = $((64 * mib)) ]
	[ "$(root_size --rootfs "$r" --memory 128m --disk 100m)" = $((100 * mib)) ]
	[ "$(root_size --image host --disk 48m)" = $((48 * mib)) ]
	run --separate-stderr "$KERN" box "$N" --image host --disk 12q -- true
	assert_status 1
	[[ $stderr == "error: box: bad --disk '12q'"* ]]
}

@test "OT-7: 200 MiB into / with --disk 64m is ENOSPC at 64 MiB, the box lives, and nothing lands on the host's disk [rootless]" {
	r=$(mkrootfs); w=$BATS_TEST_TMPDIR/w; mkdir -p "$w"
	"$KERN" box "$N" --allow-uncapped --rootfs "$r" --disk 64m -v "$w:/w" -- sh -c '
dd if=/dev/zero of=/fill bs=1M count=200 2>/w/dd; echo "status $?" >>/w/dd
ls -l /fill | tr -s " " | cut -d" " -f5 >>/w/dd; touch /w/full; sleep 3; echo alive >>/w/dd' &
	wait_for "$w/dd" '^[0-9]+$' 20
	# While the box holds 64 MiB in its /, the host side of its scratch holds nothing.
	used=$(du -sk "$(runtime_dir)/scratch" | cut -f1)
	wait
	cat "$w/dd"
	grep -q 'No space left on device' "$w/dd"
	grep -qx 'status 1' "$w/dd"
	[ "$(grep -x '[0-9]*' "$w/dd")" = $((64 << 20)) ]
	grep -qx alive "$w/dd"
	[ "$used" -lt 1024 ]
}

@test "OT-7: where tmpfs cannot hold an overlay upper (before Linux 6.6) the layer stays on disk with a warning [rootless]" {
	r=$(mkrootfs)
	run --separate-stderr env KERN_TEST_NO_TMPFS_XATTR=1 "$KERN_T" box "$N" --allow-uncapped --rootfs "$r" --disk 1m -- \
		sh -c 'dd if=/dev/zero of=/f bs=1M count=2 2>/dev/null && echo wrote-2m; rm /bin/ls; [ -e /bin/ls ] || echo whiteout-ok'
	assert_status 0
	[ "$output" = "wrote-2m
whiteout-ok" ]
	[[ $stderr == "kern: warning: the writable layer is not size-capped: this kernel's tmpfs has no user xattrs for an overlay upper (Linux 6.6); writes to / land in $(runtime_dir)/scratch/$N-"* ]]
}

@test "OT-7: the layer is charged to the box's memory cap: with --disk 0 under --memory 128m, 200 MiB into / is an OOM kill [rootless]" {
	require_caps
	run --separate-stderr box --memory 128m --disk 0 -- /h/cg-hog file /fill 200
	assert_status 137
	[[ $stderr == *"killed by the kernel's OOM killer"* ]]
	# The default (half the cap) answers ENOSPC first (--image host's /
	# holds kern's /etc and the mount points already).
	run --separate-stderr box --memory 128m -- sh -c '/h/cg-hog file /fill 200; echo "status $?"'
	assert_status 0
	assert_line_re '^ENOSPC after 6[34] MiB$'
	assert_line_re '^status 28$'
}

@test "CG-6: a fork loop under --pids-limit 32 gets EAGAIN and the box exits 0 (FACT: forks) [rootless]" {
	require_caps
	run box --pids-limit 32 -- /h/cg-hog forks 1000
	assert_status 0
	[[ $output =~ forks=([0-9]+)\ errno=EAGAIN ]]
	n=${BASH_REMATCH[1]}
	# kern's init and the hog count too: 30 forks, never more than 31.
	[ "$n" -ge 25 ]
	[ "$n" -le 31 ]
	echo "# FACT CG-6: $n forks under --pids-limit 32 (init and the workload are the other tasks)" >&3
	[ "$(bytes)" = "1 0 0 0" ]
}

@test "CG-7: --cpus 0.5 writes quota 50000 per 100000 and throttles a busy loop (FACT: ratio) [rootless]" {
	require_caps
	require_v1
	KERN_STARTED_FD=3 "$KERN" box "$N" --image host -v "$H:/h:ro" --cpus 0.5 -- /h/cg-hog spin 2 \
		>"$BATS_TEST_TMPDIR/out" 3>"$BYTES" &
	sup=$!
	wait_for_dir cpu
	c=$(v1_dir cpu)
	quota=$(cat "$c/cpu.cfs_quota_us") period=$(cat "$c/cpu.cfs_period_us")
	wait "$sup"
	[ "$quota" = 50000 ]
	[ "$period" = 100000 ]
	ratio=$(sed -n 's/.*ratio=\([0-9.]*\).*/\1/p' "$BATS_TEST_TMPDIR/out")
	run "$H/cg-hog" spin 1
	free=$(sed -n 's/.*ratio=\([0-9.]*\).*/\1/p' <<<"$output")
	echo "# FACT CG-7: busy loop under --cpus 0.5 used $ratio CPU; the same loop uncapped, same run: $free" >&3
	# Bandwidth control cannot give more than the quota (plus a little slack).
	awk -v r="$ratio" 'BEGIN { exit !(r > 0 && r <= 0.56) }'
}

@test "CG-8: --memory where no cap can be placed: box runs, byte1 2, exactly one kern: warning: line [rootless]" {
	if is_root; then
		run --separate-stderr with_readonly_cgroups env KERN_STARTED_FD=3 "$KERN" box "$N" --image host \
			--memory 64m -- true 3>"$BYTES"
	else
		caps_bind && skip "caps bind for $(id -un) here (a delegated cgroup)"
		run --separate-stderr box --memory 64m -- true
	fi
	assert_status 0
	[ "$(bytes)" = "1 2 0 0" ]
	[ "$(grep -c '^kern: ' <<<"$stderr")" = 1 ]
	[[ $stderr == "kern: warning: memory and pids caps are NOT enforced for this box (the 512 MiB and 512-task defaults included): there is no OOM or fork-bomb backstop, because "* ]]
	[[ $stderr == *"--require-limits"* ]]
	[[ $stderr == *"--allow-uncapped"* ]]
	# The same with --allow-uncapped, or KERN_QUIET: silent, and byte1 still 2.
	if is_root; then
		run --separate-stderr with_readonly_cgroups env KERN_STARTED_FD=3 "$KERN" box "$N" --image host \
			--memory 64m --allow-uncapped -- true 3>"$BYTES"
	else
		run --separate-stderr box --memory 64m --allow-uncapped -- true
	fi
	assert_status 0
	[ -z "$stderr" ]
	[ "$(bytes)" = "1 2 0 0" ]
}

@test "CG-8: no memory controller on the host: the notice once per host, and every time with --memory" {
	require_root
	run --separate-stderr with_no_cgroups "$KERN" box "$N" --image host -- true
	assert_status 0
	[[ $stderr == "kern: warning: resource caps are not enforced on this host: it has no cgroup memory controller, so box RAM is uncapped (the 512 MiB default included); isolation is otherwise intact. Enable the controller with the kernel parameter cgroup_enable=memory"* ]]
	[ -e "$XDG_DATA_HOME/kern/no-memory-controller.noticed" ]
	run --separate-stderr with_no_cgroups "$KERN" box "$N" --image host -- true
	assert_status 0
	[ -z "$stderr" ]
	run --separate-stderr with_no_cgroups env KERN_STARTED_FD=3 "$KERN" box "$N" --image host --memory 64m \
		-- true 3>"$BYTES"
	assert_status 0
	[[ $stderr == "kern: warning: resource caps are not enforced on this host"* ]]
	[ "$(grep -c '^kern: ' <<<"$stderr")" = 1 ]
	[ "$(bytes)" = "1 2 0 0" ]
}

@test "CG-9: --require-limits runs where caps bind; 125 before the workload where they do not; with --allow-uncapped exit 1 [rootless]" {
	marker=$BATS_TEST_TMPDIR/ran
	if caps_bind; then
		run box --require-limits -- true
		assert_status 0
	fi
	if is_root; then
		run --separate-stderr with_readonly_cgroups env KERN_STARTED_FD=3 "$KERN" box "$N" --image host \
			-v "$BATS_TEST_TMPDIR:/t" --require-limits -- touch /t/ran 3>"$BYTES"
	else
		caps_bind && skip "caps bind for $(id -un) here (a delegated cgroup)"
		run --separate-stderr env KERN_REQUIRE_LIMITS=1 KERN_STARTED_FD=3 "$KERN" box "$N" --image host \
			-v "$BATS_TEST_TMPDIR:/t" -- touch /t/ran 3>"$BYTES"
	fi
	assert_status 125
	[ ! -e "$marker" ]
	[ ! -s "$BYTES" ]
	[ "${stderr_lines[0]}" = "kern: sandbox setup failed: requested resource caps could not be enforced here and --require-limits is set; refusing to start" ]
	[[ ${stderr_lines[1]} == "hint: "*"--allow-uncapped"* ]]
	run --separate-stderr "$KERN" box "$N" --image host --require-limits --allow-uncapped -- true
	assert_status 1
	[ "$stderr" = "error: box: --require-limits and --allow-uncapped are mutually exclusive" ]
}

@test "CG-10: a memory hog started by kern exec hits the box cap" {
	require_caps
	run "$KERN" exec nobox -- true
	[[ $output == *"not built yet"* ]] && skip "kern exec is not built yet in this tree"
	KERN_STARTED_FD=3 "$KERN" box "$N" --image host -v "$H:/h:ro" --memory 64m -d -- /h/cg-hog sleep "$N"
	run "$KERN" exec "$N" -- /h/cg-hog mem 200
	"$KERN" stop "$N" || true
	[ "$status" -eq 137 ]
}

@test "CG-11: a workload killed by SIGKILL from outside the kernel's OOM killer ends 137 with byte2 0 [rootless]" {
	run --separate-stderr box --memory 256m --allow-uncapped -- sh -c 'kill -9 $$'
	assert_status 137
	[[ $stderr != *"OOM killer"* ]]
	[ "$(bytes | cut -d' ' -f1,3,4)" = "1 0 9" ]
}

@test "CLI-11: caller KERN_* variables never switch caps off (KERN_TEST_UNCAPPED is test-build only)" {
	require_caps
	run --separate-stderr env KERN_TEST_UNCAPPED=1 KERN_SCOPE=1 KERN_DIRECT_CAPS=1 KERN_STARTED_FD=3 "$KERN" box "$N" \
		--image host -v "$H:/h:ro" --memory 48m -- /h/cg-hog mem 200 3>"$BYTES"
	assert_status 137
	[ "$(bytes)" = "1 1 1 9" ]
	# The positive control: the test build does honour it.
	run --separate-stderr env KERN_TEST_UNCAPPED=1 KERN_STARTED_FD=3 "$TREE/build/test/kern" box "$N" \
		--image host -v "$H:/h:ro" --memory 48m --allow-uncapped -- /h/cg-hog mem 100 3>"$BYTES"
	assert_status 0
	[ "$(bytes)" = "1 2 0 0" ]
}

@test "CG-12: after an OOM kill the supervisor survives: 4 bytes, registry empty, cgroups removed [rootless]" {
	require_caps
	run box --memory 32m -- /h/cg-hog mem 100
	assert_status 137
	[ "$(stat -c %s "$BYTES")" = 4 ]
	[ "$(bytes)" = "1 1 1 9" ]
	! ls "$XDG_RUNTIME_DIR/kern/instances" 2>/dev/null | grep -q "$N" || false
	[ -z "$(box_dirs)" ]
}

@test "CG-1: v2: inside --memory 64m the box reads its own memory.max, cannot write it, sees nothing above" {
	require_caps
	is_v2 || skip "this host's cgroups are v1/hybrid: the v2 view is tested on a private cgroup2 below"
	run box --memory 64m -- sh -c 'cat /sys/fs/cgroup/memory.max; echo 1 > /sys/fs/cgroup/memory.max && echo WROTE;
		cat /proc/self/cgroup; ls /sys/fs/cgroup/..'
	[[ ${lines[0]} == 67108864 ]]
	[[ $output != *WROTE* ]]
	[[ $output == *"0::/"* ]]
}

@test "CG-1 (v1): the box's cgroup namespace starts at its own cgroup, where it runs; the caller's cgroup is unseen [rootless]" {
	require_caps
	require_v1
	run box -- cat /proc/self/cgroup
	assert_status 0
	# kern box clones PID 1 before its cgroup exists and moves it in before
	# the cgroup namespace is made: any other order shows paths like /.. here.
	grep -qx '[0-9]*:memory:/' <<<"$output"
	grep -qx '[0-9]*:pids:/' <<<"$output"
	[[ $output != *".."* ]]
}

@test "CG-1 (private cgroup2, no controllers on this host): the box sees 0::/ and only its own cgroup, read-only" {
	require_root
	is_v2 && skip "covered by CG-1 on this v2 host"
	run unshare -m sh -c 'mount -t cgroup2 none /sys/fs/cgroup || exit 99; exec "$@"' sh \
		env KERN_STARTED_FD=3 "$KERN" box "$N" --image host --allow-uncapped -- sh -c '
		grep "^0::" /proc/self/cgroup; sort -n /sys/fs/cgroup/cgroup.procs | head -1;
		[ -e /sys/fs/cgroup/kern.slice ] && echo PARENT-VISIBLE;
		echo 1 > /sys/fs/cgroup/cgroup.kill && echo WROTE; echo end' 3>"$BYTES"
	[ "$status" -ne 99 ] || skip "cannot mount a private cgroup2 here"
	assert_status 0
	[ "${lines[0]}" = "0::/" ]
	[ "${lines[1]}" = 1 ]
	[[ $output != *PARENT-VISIBLE* ]]
	[[ $output != *WROTE* ]]
	[[ $output == *"Read-only file system"* ]]
	echo "# memory.max on v2 cannot be exercised here: memory and pids are bound to v1 on this host" >&3
}

@test "v1: the box sees no cgroup filesystem and cannot lift its own caps, even from a cgroup mount of its own [rootless]" {
	require_caps
	require_v1
	# If the box ever gets to mount its memory hierarchy (this needs
	# CAP_SYS_ADMIN and mount(2), which lockdown removes), its root is the
	# workload cgroup one level below the caps: raising memory+swap and the
	# limit there and disabling the OOM killer there changes nothing.
	run --separate-stderr box --memory 64m -- sh -c '
		ls /sys/fs/cgroup 2>&1 | head -1; mkdir -p /tmp/c
		if mount -t cgroup -o memory none /tmp/c 2>/dev/null; then echo MOUNTED
			echo 999999999999 > /tmp/c/memory.memsw.limit_in_bytes
			echo 999999999999 > /tmp/c/memory.limit_in_bytes
			echo 1 > /tmp/c/memory.oom_control
		fi 2>/dev/null
		/h/cg-hog mem 200'
	assert_status 137
	[ "$(bytes)" = "1 1 1 9" ]
	[[ ${lines[0]} == *"cannot access '/sys/fs/cgroup'"* ]]
	if [[ $output == *MOUNTED* ]]; then
		echo "# FACT: the box could mount its memory hierarchy (no lockdown in this tree); the caps held" >&3
	fi
}

# An unprivileged uid without a passwd entry, so no other suite's user is
# ever given caps by this test.
DELEGATE_UID=64123

# A runtime directory uid $1 can reach (bats' own temporary directories
# are root's, 0700: kern would pass over an XDG_RUNTIME_DIR there and
# leave its state in /dev/shm/kern-<uid>), removed in teardown.
uid_runtime() {
	if [ -z "${UID_RT:-}" ]; then
		UID_RT=$(mktemp -d /tmp/kern-uid-rt.XXXXXX)
		chown "$1" "$UID_RT" && chmod 700 "$UID_RT"
	fi
}

@test "v1 delegation: a subtree root chowns to an unprivileged user gives it real caps (OOM, pids)" {
	require_root
	require_v1
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	setpriv --reuid $DELEGATE_UID --regid $DELEGATE_UID --clear-groups test -x "$KERN" ||
		skip "the test tree is not readable by uid $DELEGATE_UID (make check copies it to a readable place)"
	dirs=()
	for c in memory pids cpu; do
		d=/sys/fs/cgroup/$c/kern/user-$DELEGATE_UID
		[ -d "/sys/fs/cgroup/$c" ] || continue
		mkdir -p "$d" && chown -R $DELEGATE_UID "$d"
		dirs+=("$d")
	done
	uid_runtime $DELEGATE_UID
	rt=$UID_RT
	chmod 777 "$BATS_TEST_TMPDIR"
	as_user() {
		setpriv --reuid $DELEGATE_UID --regid $DELEGATE_UID --clear-groups env -i PATH=/usr/bin:/bin \
			XDG_RUNTIME_DIR="$rt" HOME="$rt" KERN_STARTED_FD=3 "$KERN" box "$N" --image host \
			-v "$H:/h:ro" "$@" 3>"$BYTES"
	}
	run --separate-stderr as_user --memory 64m -- sh -c '/h/cg-hog mem 200 || echo handled'
	s1=$status b1=$(bytes) e1=$stderr
	run as_user --pids-limit 16 -- /h/cg-hog forks 200
	s2=$status o2=$output
	run "$H/cg-run" --sweep
	for d in "${dirs[@]}"; do rmdir "$d"; done
	[ "$s1" = 137 ]
	[ "$b1" = "1 1 1 9" ]
	[[ $e1 == *"killed by the kernel's OOM killer"* ]]
	[ "$s2" = 0 ]
	[[ $o2 == *errno=EAGAIN* ]]
	# Its state went where XDG_RUNTIME_DIR says.
	[ -d "$rt/kern/instances" ]
}

# kern as an unprivileged uid (no passwd entry, no delegated cgroup).
as_uid() {
	local uid=$1
	shift
	uid_runtime "$uid"
	local rt=$UID_RT
	setpriv --reuid "$uid" --regid "$uid" --clear-groups env -i PATH=/usr/bin:/bin \
		XDG_RUNTIME_DIR="$rt" HOME="$rt" "$@"
}

@test "CG-8/CG-9 as an unprivileged uid with nothing delegated: the warning, byte1 2, --require-limits refuses, kern doctor's fix" {
	require_root
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	uid=64124
	chmod 777 "$BATS_TEST_TMPDIR"
	as_uid $uid test -x "$KERN" || skip "the test tree is not readable by uid $uid (make check copies it to a readable place)"
	run --separate-stderr as_uid $uid env KERN_STARTED_FD=3 "$KERN" box "$N" --image host --memory 64m \
		--cpus 0.5 -- true 3>"$BYTES"
	assert_status 0
	[ "$(bytes)" = "1 2 0 0" ]
	[ "${stderr_lines[0]}" = "kern: warning: memory and pids caps are NOT enforced for this box (the 512 MiB and 512-task defaults included): there is no OOM or fork-bomb backstop, because no writable cgroup with those controllers is delegated to uid $uid. Pass --require-limits to refuse to run uncapped, or --allow-uncapped to silence this (\`kern doctor\` shows how to delegate a cgroup)" ]
	[[ ${stderr_lines[1]} == "kern: warning: --cpus not enforced: "*"; the box can exceed 0.5 CPU" ]]
	[ "${#stderr_lines[@]}" = 2 ]
	run --separate-stderr as_uid $uid env KERN_QUIET=1 "$KERN" box "$N" --image host --memory 64m -- true
	assert_status 0
	[ -z "$stderr" ]
	run --separate-stderr as_uid $uid env KERN_STARTED_FD=3 "$KERN" box "$N" --image host --require-limits -- \
		sh -c 'echo RAN' 3>"$BYTES"
	assert_status 125
	[ -z "$output" ]
	[ ! -s "$BYTES" ]
	[ "${stderr_lines[0]}" = "kern: sandbox setup failed: requested resource caps could not be enforced here and --require-limits is set; refusing to start" ]
	run as_uid $uid "$KERN" doctor
	assert_status 2
	assert_line_re '^  caps as this user +NO '
	assert_line_re "fix: .*kern/user-$uid"
}

@test "rootless without a delegated cgroup: the warning names the reason and kern doctor the fix [rootless]" {
	# As the test user the rootless run has a delegated cgroup (tests/run
	# delegates one), so the root run covers this case: it runs kern as
	# a second test user, kernnodeleg, which nothing delegates to.
	local as=() uid d
	if is_root; then
		"$TREE/tests/helpers/test-user" kernnodeleg >/dev/null
		d=$(mktemp -d /tmp/kern-nodeleg.XXXXXX)
		chown kernnodeleg "$d" && chmod 700 "$d"
		as=(runuser -u kernnodeleg -- env -i HOME="$d" PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$d")
		"${as[@]}" "$KERN" --version >/dev/null 2>&1 || { rm -rf "$d"; skip "kernnodeleg cannot run $KERN (the tree is not world-readable; tests/run makes a readable copy)"; }
		uid=$(id -u kernnodeleg)
		run "${as[@]}" "$H/cg-run" --allow-uncapped --show
		[[ $output != *"enforced: memory pids"* ]] || { rm -rf "$d"; skip "kernnodeleg has a delegated cgroup on this host (tests/helpers/cg-delegate remove kernnodeleg)"; }
	else
		caps_bind && skip "caps bind for $(id -un) here (a delegated cgroup); the root run covers this as kernnodeleg"
		uid=$(id -u)
	fi
	run --separate-stderr "${as[@]}" "$KERN" box "$N" --image host --memory 64m --pids-limit 10 --cpus 0.5 -- true
	assert_status 0
	[[ $stderr == *"because no writable cgroup with those controllers is delegated to uid $uid"* ]]
	# The cpus knob is reported on its own line; memory and pids by the one above.
	[[ $stderr == *"kern: warning: --cpus not enforced: "*"the box can exceed 0.5 CPU"* ]]
	[ "$(grep -c '^kern: warning: --memory' <<<"$stderr")" = 0 ]
	run "${as[@]}" "$KERN" doctor
	assert_status 2
	assert_line_re '^  caps as this user +NO '
	assert_line_re "fix: .*kern/user-$uid"
	[ -z "${d:-}" ] || rm -rf "$d"
}

@test "kern doctor as root on this host: every row, caps ok, exit 0" {
	require_root
	require_caps
	run "$KERN" doctor
	assert_status 0
	for r in "user namespaces" "uid ranges" "overlay in userns" cgroups "caps as this user" seccomp AppArmor Landlock; do
		assert_line_re "^  $r "
	done
	assert_line_re '^  caps as this user +ok +memory pids cpu enforced'
	run "$KERN" doctor extra
	assert_status 1
}

@test "no cgroup directory is left after 200 box cgroups and 40 boxes [rootless]" {
	require_caps
	# 200 through the same create/destroy code the supervisor
	# uses, then real boxes four at a time (CONC-1 runs 200 concurrent ones).
	run "$H/cg-run" --name "$N" --cycles 200 --memory 64m --pids-limit 16 --cpus 0.5
	assert_status 0
	fails=0
	for batch in $(seq 10); do
		for j in 1 2 3 4; do
			"$KERN" box "$N-$batch-$j" --image host --memory 64m --pids-limit 16 -- true &
		done
		for j in 1 2 3 4; do wait -n || fails=$((fails + 1)); done
	done
	[ "$fails" = 0 ]
	left=$(find /sys/fs/cgroup -maxdepth 5 -type d -name "kern-box-$N*" 2>/dev/null)
	[ -z "$left" ] || { echo "$left"; false; }
}

@test "v1, root: the box cgroup is made while PID 1 builds the root, and joined before anything of the box runs; one PID 1 cannot join ends the start with 125, one line, nothing left" {
	require_caps
	require_v1
	[ "$(id -u)" = 0 ] || skip "only root's v1 box cgroup is made after PID 1 is cloned"
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	local err=$BATS_TEST_TMPDIR/err out=$BATS_TEST_TMPDIR/out go=$BATS_TEST_TMPDIR/go
	# Paused with the cgroup made and not yet handed over: PID 1 exists
	# (cloned into its namespaces, the root under way or built), in no
	# cgroup of the box; its leaf goes, so PID 1 has nothing to join.
	KERN_TEST_PAUSE=cgroup KERN_TEST_RESUME=$go KERN_STARTED_FD=3 "$KERN_T" box "$N" --image host \
		-- sh -c 'echo workload ran' >"$out" 2>"$err" 3>"$BYTES" &
	sup=$!
	wait_for "$err" "paused at cgroup" 10
	m=$(v1_dir memory)
	[ -n "$m" ]
	[ -d "$m/box" ]
	pid1=
	for c in $(pgrep -P "$sup"); do
		grep -q "^NSpid:.*[[:space:]]1$" "/proc/$c/status" && pid1=$c
	done
	[ -n "$pid1" ] || { echo "no PID 1 among the supervisor's children"; false; }
	! grep -q "kern-box-$N-" "/proc/$pid1/cgroup" || false
	rmdir "$m/box"
	touch "$go"
	rc=0
	wait "$sup" || rc=$?
	[ "$rc" = 125 ] || { echo "exit $rc, expected 125"; cat "$err"; false; }
	[ ! -s "$out" ] || { echo "the workload ran: $(cat "$out")"; false; }
	grep -v "^kern-test: paused" "$err" >"$err.lines" || true
	[ "$(wc -l <"$err.lines")" = 1 ] || { cat "$err"; false; }
	grep -qx "kern: sandbox setup failed: cgroup: open $m/box/tasks, for PID 1 to join: No such file or directory" \
		"$err.lines" || { cat "$err"; false; }
	no_leftovers "$N"
	[ ! -d "/proc/$pid1" ]
	# Box root as host root asks the supervisor for no trees: the cgroup
	# is made right after the id maps; the box still starts at its own.
	# (The no-userns pass has no id maps: its boxes are that case already.)
	[ -n "${KERN_TEST_CHROOT:-}" ] && return 0
	run "$KERN" box "$N" --map-host-root --image host -- cat /proc/self/cgroup
	assert_status 0
	grep -qx '[0-9]*:memory:/' <<<"$output"
	grep -qx '[0-9]*:pids:/' <<<"$output"
}

@test "a SIGKILLed supervisor's empty cgroups are swept by the next box [rootless]" {
	require_caps
	# Any box of this user sweeps, and make check runs other suites beside
	# this one: the dirs are looked at the moment PID 1 is gone, and when
	# another box swept even then, the scenario runs again (at most 10
	# times) until they are seen to outlive the kill.
	local try x outlived=
	for try in $(seq 10); do
		"$KERN" box "$N" --image host -v "$H:/h:ro" -- /h/cg-hog sleep "$N" &
		sup=$!
		wait_for_dir pids
		p=$(v1_dir pids 2>/dev/null || true)
		[ -n "$p" ] || p=$(box_dirs | head -1)
		kill -KILL "$sup"
		wait "$sup" || true
		# PID 1 dies with its supervisor and takes the box with it. On v1
		# the tasks are one level down (cgroup/tree.c): wait for the whole
		# tree to empty, or the next box's sweep meets a box still dying
		# (rmdir: EBUSY) and rightly leaves it.
		for _ in $(seq 500); do
			x=$(find "$p" -name cgroup.procs -exec cat {} + 2>/dev/null | head -1)
			[ -z "$x" ] && break
			sleep 0.01
		done
		[ -z "$x" ]
		[ -d "$p" ] && outlived=$try && break
	done
	[ -n "$outlived" ] || { echo "another box swept first, $try times"; false; }
	! pgrep -f "^/h/cg-hog sleep $N" || false
	run "$KERN" box "$N-next" --image host -- true
	assert_status 0
	[ -z "$(box_dirs)" ]
}

@test "kern-cg alone: creates the box cgroup for its own pid, execs the rest, refuses bad input [rootless]" {
	run --separate-stderr "$TREE/build/bin/kern-cg" --name "$N" --memory 64m -- sh -c 'echo pid=$$'
	assert_status 0
	[[ $output == pid=* ]]
	# A bare `kern` after `--` is kern's own image, never the PATH's.
	mkdir "$BATS_TEST_TMPDIR/path"
	printf '#!/bin/sh\necho impostor\n' >"$BATS_TEST_TMPDIR/path/kern"
	chmod 755 "$BATS_TEST_TMPDIR/path" "$BATS_TEST_TMPDIR/path/kern"
	PATH=$BATS_TEST_TMPDIR/path:$PATH run --separate-stderr "$TREE/build/bin/kern-cg" --name "$N" -- kern --version
	assert_status 0
	[ "$output" = "$("$TREE/build/kern" --version)" ]
	run "$TREE/build/bin/kern-cg" --name "$N" --memory lots -- true
	assert_status 1
	assert_line_re "^error: box: kern-cg: invalid --memory 'lots'"
	run "$TREE/build/bin/kern-cg" --memory 64m -- true
	assert_status 1
	run "$TREE/build/bin/kern-cg" --name "$N" --require-limits --allow-uncapped -- true
	assert_status 1
	run --separate-stderr "$TREE/build/bin/kern-cg" --name "$N" --allow-uncapped -- /nonexistent/cmd
	assert_status 125
	[ "$stderr" = "kern: sandbox setup failed: kern-cg: exec /nonexistent/cmd: No such file or directory" ]
	# The first run left its cgroup (nothing supervised it, and its pid is
	# gone): a sweep removes it; the failed exec removed its own.
	run "$H/cg-run" --sweep
	assert_status 0
	[ -z "$(box_dirs)" ]
}

@test "profiles: vcpu values reach --show-config and the caps, explicit flags win, vdisk is size-capped [rootless]" {
	cfg=$BATS_TEST_TMPDIR/kern.toml
	cat >"$cfg" <<-'EOF'
	# profiles for the tests
	[[vcpu]]
	name = "small"
	cpus = 0.5
	memory = "48m"
	pids = 40

	[[vdisk]]
	name = "scratch"
	size = "8m"
	EOF
	run env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vcpu:small vdisk:scratch --show-config -- true
	assert_status 0
	assert_line_re '^memory: 50331648$'
	assert_line_re '^cpus: 0\.5$'
	assert_line_re '^pids_limit: 40$'
	assert_line_re '^vdisks: scratch=8388608@/vdisk/scratch$'
	first=$output
	run env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vcpu:small vdisk:scratch --show-config -- true
	[ "$output" = "$first" ]
	run env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host --memory 1g vcpu:small --show-config -- true
	assert_line_re '^memory: 1073741824$'
	run env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host -v "$H:/h:ro" vdisk:scratch --allow-uncapped -- \
		sh -c '/h/cg-hog file /vdisk/scratch/x 20; echo alive'
	assert_status 0
	[[ $output == *"ENOSPC after 8 MiB"* ]]
	[[ $output == *alive* ]]
	if caps_bind; then
		run env KERN_CONFIG="$cfg" KERN_STARTED_FD=3 "$KERN" box "$N" --image host -v "$H:/h:ro" vcpu:small -- \
			/h/cg-hog mem 200 3>"$BYTES"
		assert_status 137
	fi
}

@test "profiles: undefined profile, bad kern.toml and refused vgpio devices are exit 1 with the reason [rootless]" {
	cfg=$BATS_TEST_TMPDIR/kern.toml
	printf '[[vgpio]]\nname = "ok"\ndevices = ["/dev/null"]\n[[vgpio]]\nname = "log"\ndevices = ["/dev/kmsg"]\n' >"$cfg"
	run --separate-stderr env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vcpu:nope -- true
	assert_status 1
	[ "$stderr" = "error: box: profile 'vcpu:nope' is not defined in $cfg" ]
	run --separate-stderr env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vgpio:log -- true
	assert_status 1
	[ "$stderr" = "error: box: profile 'vgpio:log': refusing device '/dev/kmsg': memory, port and kernel log devices are never passed to a box" ]
	run env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vgpio:ok --show-config -- true
	assert_status 0
	assert_line_re '^devices: /dev/null$'
	printf '[[vcpu]]\nname = "x"\nmemory = 1g\n' >"$cfg"
	run --separate-stderr env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vcpu:x -- true
	assert_status 1
	[ "$stderr" = "error: box: $cfg:3:10: invalid value '1g'" ]
}

@test "profiles: a vdisk backend other than \"tmpfs\" or \"disk\" is exit 1 and one line, before any box; --show-config shows either as the same vdisks line [rootless]" {
	cfg=$BATS_TEST_TMPDIR/kern.toml
	printf '[[vdisk]]\nname = "d"\nsize = "8m"\nbackend = "ext4"\n' >"$cfg"
	run --separate-stderr env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vdisk:d -- touch "$BATS_TEST_TMPDIR/ran"
	assert_status 1
	[ "$stderr" = "error: box: $cfg:4:11: 'backend' must be \"tmpfs\" or \"disk\"" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	for backend in tmpfs disk; do
		printf '[[vdisk]]\nname = "d"\nsize = "8m"\nbackend = "%s"\n' "$backend" >"$cfg"
		run --separate-stderr env KERN_CONFIG="$cfg" "$KERN" box "$N" --image host vdisk:d --show-config -- true
		assert_status 0
		assert_line_re '^vdisks: d=8388608@/vdisk/d$'
		[ -z "$stderr" ]
	done
}
