#!/usr/bin/env bats
# kern.toml [[vdisk]] with backend = "disk" (box-cli.md §2.3): as root, an
# ext4 on a loop device over a sparse file under the runtime directory,
# private to the box, size-capped (ENOSPC, the box lives on) and gone with
# the box however it ends. The supervisor makes it (box root is a
# subordinate id in a user namespace, which cannot mount ext4); PID 1
# attaches it (lib/box/vdisk.c). The tmpfs backend's cases live in
# cgroup.bats and plan.bats.
load helper
load plan

setup() {
	kern_private_dirs
	H=$TREE/build/helpers
	cfg=$BATS_TEST_TMPDIR/kern.toml
	printf '[[vdisk]]\nname = "d"\nsize = "8m"\nbackend = "disk"\n' >"$cfg"
	export KERN_CONFIG=$cfg
}

# The loop devices whose backing file is under this file's runtime
# directory, one name a line.
vdisk_loops() {
	local rt f
	rt=$(runtime_dir)
	for f in /sys/block/loop*/loop/backing_file; do
		[ -e "$f" ] || continue
		if grep -q "^$rt/" "$f" 2>/dev/null; then
			f=${f%/loop/backing_file}
			echo "${f##*/}"
		fi
	done
}

# loop_gone NAME: within 5 s the loop device NAME has no backing file
# (the kernel unbinds an autoclear device from a work queue).
loop_gone() {
	for _ in $(seq 100); do
		[ -e "/sys/block/$1/loop/backing_file" ] || return 0
		sleep 0.05
	done
	echo "$1 is still bound to $(cat "/sys/block/$1/loop/backing_file")"
	return 1
}

# The loop device in a box's mountinfo line for /vdisk/d.
loop_in() { grep -o ' - ext4 /dev/loop[0-9]*' <<<"$1" | head -1 | sed 's|.*/dev/||'; }

@test "vdisk disk: the box sees an ext4 on a loop device at the path, nosuid and nodev, box root owns it and writes" {
	require_root
	run "$KERN" box vd1 --image host vdisk:d -- sh -c \
		'grep " /vdisk/d " /proc/self/mountinfo; stat -c "%u %g %a" /vdisk/d; ls -A /vdisk/d; echo hi >/vdisk/d/x && cat /vdisk/d/x; stat -c "%u" /vdisk/d/x; id -u'
	assert_status 0
	assert_line_re ' /vdisk/d rw,nosuid,nodev,[^ ]*.* - ext4 /dev/loop[0-9]+ rw'
	[ "$(grep -c ' /vdisk/d ' <<<"$output")" = 1 ]
	# Box root's, mode 1777 like a vdisk tmpfs, empty (no lost+found).
	assert_line_re '^0 0 1777$'
	refute_line_re 'lost\+found'
	assert_line_re '^hi$'
	[ "$(tail -n 2 <<<"$output")" = "$(printf '0\n0')" ]
	# And a vdisk without backend is still the tmpfs.
	printf '[[vdisk]]\nname = "t"\nsize = "8m"\n' >>"$cfg"
	run "$KERN" box vd1 --image host vdisk:d vdisk:t -- grep ' /vdisk/' /proc/self/mountinfo
	assert_status 0
	assert_line_re ' /vdisk/d rw,nosuid,nodev,.* - ext4 /dev/loop'
	assert_line_re ' /vdisk/t rw,nosuid,nodev,.* - tmpfs tmpfs rw,size=8192k'
}

@test "vdisk disk: writes past the size fail with ENOSPC and the box lives on" {
	require_root
	run "$KERN" box vd2 --image host -v "$H:/h:ro" vdisk:d -- sh -c '/h/cg-hog file /vdisk/d/big 20; echo "alive $?"'
	assert_status 0
	assert_line_re '^ENOSPC after [0-7] MiB$'
	assert_line_re '^alive 28$'
	# Nothing of it reached the host: no loop device, no file.
	[ -z "$(vdisk_loops)" ]
	no_leftovers vd2
}

@test "vdisk disk: the loop device and the file are gone when the box ends, and after SIGKILL of the supervisor" {
	require_root
	rt=$(runtime_dir)
	run "$KERN" box vd3 --image host vdisk:d -- sh -c 'grep " /vdisk/d " /proc/self/mountinfo'
	assert_status 0
	dev=$(loop_in "$output")
	[ -n "$dev" ]
	loop_gone "$dev"
	[ -z "$(vdisk_loops)" ]
	no_leftovers vd3
	# SIGKILL: nothing is left to tear down, the kernel lets go of it all.
	o=$BATS_TEST_TMPDIR/o
	"$KERN" box vd3k --image host vdisk:d -- sh -c 'grep " /vdisk/d " /proc/self/mountinfo; exec sleep 300.$$' >"$o" 2>&1 &
	kpid=$!
	wait_for "$o" ' /vdisk/d ' 10
	dev=$(loop_in "$(cat "$o")")
	# While the box runs: bound, to a file with no name in its scratch.
	grep -Eq "^$rt/scratch/vd3k-[0-9]+/.* \(deleted\)$" "/sys/block/$dev/loop/backing_file" ||
		{ cat "/sys/block/$dev/loop/backing_file"; false; }
	[ "$(vdisk_loops)" = "$dev" ]
	kill -KILL $kpid
	wait $kpid 2>/dev/null || true
	loop_gone "$dev"
	[ -z "$(vdisk_loops)" ]
	# No process holds the file either.
	[ -z "$(find /proc/[0-9]*/fd -lname "$rt/*" 2>/dev/null)" ]
}

@test "vdisk disk: two boxes at once get two loop devices and see only their own disk" {
	require_root
	for b in a b; do
		"$KERN" box "vd4$b" --image host vdisk:d -- sh -c \
			"touch /vdisk/d/$b; grep ' /vdisk/d ' /proc/self/mountinfo; exec sleep 300" \
			>"$BATS_TEST_TMPDIR/$b" 2>&1 &
	done
	wait_for "$BATS_TEST_TMPDIR/a" ' /vdisk/d ' 10
	wait_for "$BATS_TEST_TMPDIR/b" ' /vdisk/d ' 10
	da=$(loop_in "$(cat "$BATS_TEST_TMPDIR/a")")
	db=$(loop_in "$(cat "$BATS_TEST_TMPDIR/b")")
	[ -n "$da" ]
	[ -n "$db" ]
	[ "$da" != "$db" ]
	[ "$("$KERN" exec vd4a -- ls /vdisk/d)" = a ]
	[ "$("$KERN" exec vd4b -- ls /vdisk/d)" = b ]
	"$KERN" stop vd4a vd4b >/dev/null
	wait
	loop_gone "$da"
	loop_gone "$db"
}

@test "vdisk disk: hostile sizes, paths and backends are refused before any box; a size past the free space is 125" {
	require_root
	for size in '"512k"' '"17t"' '"1e"' 0 -1 '"8m "' '"99999999999t"'; do
		printf '[[vdisk]]\nname = "d"\nsize = %s\nbackend = "disk"\n' "$size" >"$cfg"
		run --separate-stderr "$KERN" box vd5 --image host vdisk:d -- touch "$BATS_TEST_TMPDIR/ran"
		assert_status 1
		[[ $stderr == "error: box: $cfg:3:8: "* ]] || { echo "size $size: $stderr"; false; }
		[ "$(wc -l <<<"$stderr")" = 1 ]
	done
	for path in '"/"' '"/proc/x"' '"/dev/loop0"' '"/sys/x"' '"relative"' '"/a/../dev"' '"/a:b"'; do
		printf '[[vdisk]]\nname = "d"\nsize = "8m"\nbackend = "disk"\npath = %s\n' "$path" >"$cfg"
		run --separate-stderr "$KERN" box vd5 --image host vdisk:d -- touch "$BATS_TEST_TMPDIR/ran"
		assert_status 1
		[ "$stderr" = "error: box: $cfg:5:8: 'path' must be an absolute path outside /, /proc, /sys and /dev" ] ||
			{ echo "path $path: $stderr"; false; }
	done
	printf '[[vdisk]]\nname = "d"\nsize = "8m"\nbackend = "ext4"\n' >"$cfg"
	run --separate-stderr "$KERN" box vd5 --image host vdisk:d -- touch "$BATS_TEST_TMPDIR/ran"
	assert_status 1
	[ "$stderr" = "error: box: $cfg:4:11: 'backend' must be \"tmpfs\" or \"disk\"" ]
	# --map-host-root: the chain's supervisor would be inside the box's
	# user namespace, which cannot make the disk.
	printf '[[vdisk]]\nname = "d"\nsize = "8m"\nbackend = "disk"\n' >"$cfg"
	run --separate-stderr "$KERN" box vd5 --image host --map-host-root vdisk:d -- touch "$BATS_TEST_TMPDIR/ran"
	assert_status 1
	[[ $stderr == "error: box: --map-host-root cannot be combined with a vdisk with backend = \"disk\""* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	# Larger than the runtime directory's free space (16t is the most
	# kern.toml may say): the sparse file could fill the host's disk.
	free=$(df -B1 --output=avail "$(runtime_dir)" | tail -1)
	[ "$free" -lt $((16 << 40)) ] || skip "the runtime directory has 16 TiB free"
	printf '[[vdisk]]\nname = "d"\nsize = "16t"\nbackend = "disk"\n' >"$cfg"
	run --separate-stderr "$KERN" box vd5 --image host vdisk:d -- touch "$BATS_TEST_TMPDIR/ran"
	assert_status 125
	[[ $stderr =~ ^"kern: sandbox setup failed: vdisk /vdisk/d: 17592186044416 bytes asked, "[0-9]+" free in ".*": No space left on device"$ ]] ||
		{ echo "$stderr"; false; }
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ -z "$(vdisk_loops)" ]
	no_leftovers vd5
}

@test "vdisk disk: --show-config's vdisks line is the tmpfs one; the --plan chain behaves like kern box" {
	require_root
	run "$KERN" box vd6 --image host vdisk:d --show-config -- true
	assert_status 0
	assert_line_re '^vdisks: d=8388608@/vdisk/d$'
	plan=$("$KERN" box vd6 --image host vdisk:d --plan -- true)
	[[ $plan == *" kern-fs "*" --vdisk /vdisk/d:8388608 "* ]] || { echo "$plan"; false; }
	[[ $plan != *"--tmpfs /vdisk/d"* ]]
	compare_plan vd6 --image host -v "$H:/h:ro" vdisk:d
	assert_line_re '^/vdisk/d ext4 rw,nosuid,nodev,'
	# ENOSPC and the box living on, through the chain.
	plan=$("$KERN" box vd6 --image host -v "$H:/h:ro" vdisk:d --plan -- sh -c '/h/cg-hog file /vdisk/d/big 20; echo "alive $?"')
	run sh -c "$plan"
	assert_status 0
	assert_line_re '^ENOSPC after [0-7] MiB$'
	assert_line_re '^alive 28$'
	[ -z "$(vdisk_loops)" ]
}

@test "vdisk disk: a caller that is not root gets the tmpfs backend and one note [rootless]" {
	is_root && skip "as root the disk backend is used (the tests above)"
	run --separate-stderr "$KERN" box vd7 --image host -v "$H:/h:ro" vdisk:d --allow-uncapped -- \
		sh -c 'grep " /vdisk/d " /proc/self/mountinfo; /h/cg-hog file /vdisk/d/big 20; echo "alive $?"'
	assert_status 0
	assert_line_re ' /vdisk/d rw,nosuid,nodev,.* - tmpfs tmpfs rw,size=8192k'
	assert_line_re '^ENOSPC after 8 MiB$'
	[ "$stderr" = 'kern: note: backend = "disk" needs host root (a loop device): this vdisk is a tmpfs charged to the box'"'"'s memory cap instead' ]
	run --separate-stderr "$KERN" box vd7 --image host -q vdisk:d -- true
	assert_status 0
	[ -z "$stderr" ]
	plan=$("$KERN" box vd7 --image host vdisk:d --plan -- true 2>/dev/null)
	[[ $plan == *"--tmpfs /vdisk/d:8388608"* ]] && [[ $plan != *--vdisk* ]]
}
