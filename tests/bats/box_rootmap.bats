#!/usr/bin/env bats
# A box started by root holds no more power over the host than one started by
# a user (isolation.md §3, namespaces and id maps, last bullet;
# security-tests.md OT-4..OT-6): box root is a subordinate id, binds are
# idmapped, and --map-host-root is the explicit way back.
load helper

setup() { kern_private_dirs; }

# The first host uid of root's boxes (helper.bash).
root_base() { box_root_uid; }

@test "OT-4: a root-run box cannot reopen a host file given as stdin for writing, nor read a root-only one" {
	require_root
	echo orig >"$BATS_TEST_TMPDIR/f"
	run "$KERN" box ot4w --image host -- sh -c 'echo evil > /proc/self/fd/0' <"$BATS_TEST_TMPDIR/f"
	[ "$status" -ne 0 ]
	assert_line_re 'Permission denied'
	[ "$(cat "$BATS_TEST_TMPDIR/f")" = orig ]
	echo secret >"$BATS_TEST_TMPDIR/s"
	chmod 600 "$BATS_TEST_TMPDIR/s"
	run "$KERN" box ot4r --image host -- cat /proc/self/fd/0 <"$BATS_TEST_TMPDIR/s"
	[ "$status" -ne 0 ]
	[[ $output != *secret* ]]
	# The descriptor itself still works: reading stdin is not reopening it.
	run "$KERN" box ot4c --image host -- cat <"$BATS_TEST_TMPDIR/s"
	assert_status 0
	[ "$output" = secret ]
}

# The caller's pipes are host root's (mode 0600): box root, a subordinate
# id, could not reopen them through /dev/stdout as a user's box reopens its
# user's pipes. They become box root's; a named FIFO, like any host file,
# keeps its owner (OT-4).
@test "OT-4: a root-run box reopens its stdio pipes (/dev/stdout, /dev/stderr, kern exec) but not a named FIFO" {
	require_root
	# (bats keeps a run's stderr in a file: pipes on all three here)
	t=$BATS_TEST_TMPDIR
	"$KERN" box ot4p --image host -- sh -c 'echo out > /dev/stdout; echo err > /dev/stderr; cat /dev/stdin' \
		< <(echo in) 2> >(cat >"$t/err1") | cat >"$t/out1"
	wait_for "$t/err1" '^err$' 5
	[ "$(cat "$t/out1")" = "$(printf 'out\nin')" ]
	"$KERN" box ot4px -d --image host -- sleep 60 >/dev/null
	"$KERN" exec ot4px -- sh -c 'echo out > /dev/stdout; echo err > /dev/stderr' 2> >(cat >"$t/err2") | cat >"$t/out2"
	"$KERN" stop ot4px >/dev/null
	wait_for "$t/err2" '^err$' 5
	[ "$(cat "$t/out2")" = out ]
	mkfifo -m 600 "$BATS_TEST_TMPDIR/fifo"
	cat "$BATS_TEST_TMPDIR/fifo" >"$BATS_TEST_TMPDIR/got" &
	rc=0
	"$KERN" box ot4pf --image host -- sh -c 'echo evil > /dev/stdout' >"$BATS_TEST_TMPDIR/fifo" 2>"$t/err3" || rc=$?
	wait
	cat "$t/err3"
	[ "$rc" -ne 0 ]
	grep -q 'Permission denied' "$t/err3"
	[ ! -s "$BATS_TEST_TMPDIR/got" ]
	[ "$(stat -c %u:%g "$BATS_TEST_TMPDIR/fifo")" = 0:0 ]
}

@test "OT-5: a root-run box plants no setuid, setgid or file-capability binary through a rw bind" {
	require_root
	share=$BATS_TEST_TMPDIR/share
	mkdir "$share"
	# Already there, made by host root: a write from the box clears the bit
	# (the box holds no CAP_FSETID over the host's user namespace).
	cp /usr/bin/id "$share/old"
	chmod 4755 "$share/old"
	run "$KERN" box ot5 --image host -v "$share:/share" -- sh -c '
echo >> /share/old; echo "append $?"
grep -E "^Cap(Bnd|Eff)" /proc/self/status
cp /usr/bin/id /share/x
chmod 4755 /share/x; echo "chmod u+s $?"
chmod 2755 /share/x; echo "chmod g+s $?"
chmod 755 /share/x; echo "chmod 755 $?"
python3 -c "
import os
for flags in (os.O_CREAT | os.O_WRONLY, os.O_TMPFILE | os.O_WRONLY):
    try:
        fd = os.open(\"/share\" if flags & os.O_TMPFILE == os.O_TMPFILE else \"/share/y\", flags, 0o4755)
        print(\"open made\", oct(os.fstat(fd).st_mode))
    except OSError as e:
        print(\"open\", e.strerror)
try:
    os.mknod(\"/share/z\", 0o106755)
    print(\"mknod made\")
except OSError as e:
    print(\"mknod\", e.strerror)
"
/usr/sbin/setcap cap_setuid+ep /share/x 2>/dev/null; echo "setcap $?"
mkdir /share/d; chmod g+s /share/d; echo "dir g+s $?"'
	assert_status 0
	assert_line_re '^chmod u\+s [1-9]'
	assert_line_re '^chmod g\+s [1-9]'
	assert_line_re '^chmod 755 0$'
	assert_line_re '^open Operation not permitted$'
	refute_line_re 'made'
	assert_line_re '^setcap [1-9]'
	assert_line_re '^dir g\+s [1-9]'
	assert_line_re '^append 0$'
	# No CAP_SETFCAP (31) in the box.
	for set in CapBnd CapEff; do
		mask=$(awk -v s="$set:" '$1 == s {print $2}' <<<"$output")
		[ $(( 0x$mask & (1 << 31) )) -eq 0 ]
	done
	# Nothing setuid, setgid or capable on the host; what the box wrote is
	# root-owned, as a workspace of root's must be.
	[ -z "$(find "$share" -perm /6000)" ]
	[ "$(stat -c '%u:%g %a' "$share/x")" = "0:0 755" ]
	run python3 -c "import os,sys; os.getxattr(sys.argv[1], 'security.capability')" "$share/x"
	[[ $output == *"No data available"* ]]
}

@test "OT-5: --bind-rootfs as root plants no setuid file in the directory" {
	require_root
	r=$BATS_TEST_TMPDIR/br
	cp -a "$(mkrootfs)" "$r"
	run "$KERN" box ot5b --rootfs "$r" --bind-rootfs -- sh -c 'cp /bin/busybox /suid; chmod 4755 /suid; echo "chmod $?"; echo kept > /kept'
	assert_status 0
	assert_line_re '^chmod [1-9]'
	[ -z "$(find "$r" -xdev -perm /6000)" ]
	[ "$(stat -c %u "$r/kept")" = 0 ]
}

@test "OT-5: with no writable bind a root-run box keeps setuid bits in its own root" {
	require_root
	run "$KERN" box ot5o --rootfs "$(mkrootfs)" -- sh -c 'touch /f; chmod 4755 /f; stat -c %a /f'
	assert_status 0
	[ "$output" = 4755 ]
}

@test "OT-6: root-only /proc files are not readable in a root-run box" {
	require_root
	[ -e /proc/slabinfo ] || skip "this kernel has no /proc/slabinfo"
	run "$KERN" box ot6 --image host -- sh -c '
for f in slabinfo kpageflags kpagecount vmallocinfo pagetypeinfo; do
	[ -e /proc/$f ] || continue
	if head -c 1 /proc/$f >/dev/null 2>&1; then echo "$f readable"; else echo "$f denied"; fi
done'
	assert_status 0
	assert_line_re '^slabinfo denied$'
	refute_line_re readable
}

@test "OT-6: a root-only host directory reached through a bind stays closed to box root" {
	require_root
	d=$BATS_TEST_TMPDIR/theirs
	mkdir -p "$d/private"
	echo key >"$d/private/k"
	chown -R 1234:1234 "$d/private"
	chmod 700 "$d/private"
	run "$KERN" box ot6b --image host -v "$d:/d:ro" -- cat /d/private/k
	[ "$status" -ne 0 ]
	assert_line_re 'Permission denied'
}

@test "root's boxes map box root to a subordinate id, single-id and range" {
	require_root
	base=$(root_base)
	run "$KERN" box rmap1 --image host -- cat /proc/self/uid_map /proc/self/gid_map
	assert_status 0
	[ "$(echo "${lines[0]}" | tr -s ' ')" = " 0 $base 1" ]
	[ "$(echo "${lines[1]}" | tr -s ' ')" = " 0 $base 1" ]
	run "$KERN" box rmap2 --image host --uid-range -- sh -c 'cat /proc/self/uid_map; id -u; id -G'
	assert_status 0
	[[ $(echo "${lines[0]}" | tr -s ' ') == " 0 $base "* ]]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = 0 ]
}

@test "--map-host-root maps box root to host root, as before" {
	require_root
	run "$KERN" box hr1 --image host --map-host-root -- cat /proc/self/uid_map
	assert_status 0
	[ "$(echo "${lines[0]}" | tr -s ' ')" = " 0 0 1" ]
	echo orig >"$BATS_TEST_TMPDIR/f"
	run "$KERN" box hr2 --image host --map-host-root -- sh -c 'echo changed > /proc/self/fd/0' <"$BATS_TEST_TMPDIR/f"
	assert_status 0
	[ "$(cat "$BATS_TEST_TMPDIR/f")" = changed ]
}

@test "root's workspace: files written through -v are root-owned, existing root files writable; system binds look root-owned" {
	require_root
	ws=$BATS_TEST_TMPDIR/ws
	mkdir -p "$ws/sub"
	echo old >"$ws/sub/old"
	chmod 700 "$ws"
	run "$KERN" box ws1 --image host -v "$ws:/workspace" -w /workspace -- sh -c '
echo new > new; echo more >> sub/old; mkdir made; stat -c "%u:%g" new sub/old /usr/bin/env /etc/ld.so.cache /'
	assert_status 0
	[ "${lines[*]}" = "0:0 0:0 0:0 0:0 0:0" ]
	[ "$(stat -c %u:%g "$ws/new" "$ws/made" | sort -u)" = 0:0 ]
	[ "$(cat "$ws/sub/old")" = "old
more" ]
}

# PID 1 asks the supervisor for every tree at once and takes each when it
# needs it (idmount.h, idm_prefetch): each target must still get its own
# source and flags, the same source twice two trees, and more binds than are
# asked for ahead (32) the rest one by one.
@test "root's box with many binds: each target gets its own source and flags, beyond the trees asked for ahead" {
	require_root
	t=$BATS_TEST_TMPDIR
	mkdir "$t/a" "$t/b"
	echo A >"$t/a/f"
	echo B >"$t/b/f"
	# a deep target first: binds are made shallowest first, so the trees
	# are taken in another order than they were asked for
	args=(-v "$t/a:/m/d/e/a0" -v "$t/a:/m/a2:ro" -v "$t/b:/m/b1:ro" -v "$t/a:/m/a1" -v "$t/a:/m/a3")
	for i in $(seq 40); do args+=(-v "$t/b:/m/n$i:ro"); done
	run --separate-stderr "$KERN" box many --image host "${args[@]}" -- sh -c '
for d in a1 b1 a2 a3 n1 n40 d/e/a0; do printf "%s " "$(head -n1 /m/$d/f)"; (echo x >> /m/$d/f) 2>/dev/null && echo rw || echo ro; done'
	assert_status 0
	[ "${lines[*]}" = "A rw B ro A ro A rw B ro B ro A rw" ]
	[ "$stderr" = "" ]
	[ "$(cat "$t/a/f")" = "A
x
x
x" ]
}

@test "root's box: a non-root box user writes as a subordinate id, never as the host uid of the same number" {
	require_root
	base=$(root_base)
	ws=$BATS_TEST_TMPDIR/open
	mkdir "$ws"
	chmod 1777 "$ws"
	run "$KERN" box sub1 --rootfs "$(mkrootfs)" --user 1000 -v "$ws:/w" -- sh -c 'id -u; touch /w/mine'
	assert_status 0
	[ "${lines[0]}" = 1000 ]
	[ "$(stat -c %u "$ws/mine")" = $((base + 1000)) ]
}

@test "root's --rootfs overlay: root-owned lower files look root-owned and copy up (echo >> /etc/motd)" {
	require_root
	r=$BATS_TEST_TMPDIR/deb
	cp -a "$(mkrootfs)" "$r"
	echo welcome >"$r/etc/motd"
	chmod 700 "$r"
	run "$KERN" box cu1 --rootfs "$r" -- sh -c 'stat -c "%u:%g %a" /etc/motd /; echo x >> /etc/motd; cat /etc/motd'
	assert_status 0
	[ "${lines[0]}" = "0:0 644" ]
	[ "${lines[1]}" = "0:0 700" ]
	[ "${lines[2]}" = welcome ]
	[ "${lines[3]}" = x ]
	[ "$(cat "$r/etc/motd")" = welcome ]
}

@test "root's bind of a filesystem that cannot be idmapped: made without, with a note; box root holds less, not more" {
	require_root
	src=$BATS_TEST_TMPDIR/v
	mkdir -p "$src/sub" "$BATS_TEST_TMPDIR/lo1" "$BATS_TEST_TMPDIR/lo2"
	echo top >"$src/top"
	echo low >"$BATS_TEST_TMPDIR/lo1/f"
	# overlayfs has no idmapped mounts; the submount makes the whole tree
	# unidmappable.
	run --separate-stderr unshare -m --propagation private sh -c "
		mount -t overlay overlay -o lowerdir=$BATS_TEST_TMPDIR/lo1:$BATS_TEST_TMPDIR/lo2 '$src/sub' &&
		'$KERN' box fb --image host -v '$src:/v' -- sh -c 'stat -c %u /v/top /v/sub/f; echo x > /v/new'"
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = 65534 ]
	[ "${lines[1]}" = 65534 ]
	[[ $stderr == *"kern: note: $src (or a mount below it) cannot be idmapped"*"belong to nobody"* ]]
	[[ $stderr == *"Permission denied"* ]]
	[ ! -e "$src/new" ]
}

@test "root's boxes refuse to start without idmapped mounts, naming --map-host-root" {
	require_root
	run --separate-stderr env KERN_TEST_NO_MOUNT_API=1 "$KERN_T" box noidm --image host -- true
	assert_status 125
	[ "$stderr" = "kern: sandbox setup failed: idmapped mounts, which root's boxes need (Linux 5.12; --map-host-root does without), for /usr: Function not implemented" ]
	run --separate-stderr env KERN_TEST_NO_MOUNT_API=1 "$KERN_T" box noidm2 --rootfs "$(mkrootfs)" -- true
	assert_status 125
	[[ $stderr == *"idmapped mounts, which root's boxes need"*"--map-host-root"* ]]
	run env KERN_TEST_NO_MOUNT_API=1 "$KERN_T" box noidm3 --map-host-root --image host -- true
	assert_status 0
}

# The supervisor of a root-run box serves PID 1's idmapped mounts while
# PID 1 builds its root: a PID 1 stalled there (the test build's pause) must
# not leave it deaf to stop signals and the deadline.
@test "a root-run box whose PID 1 stalls in setup still ends on SIGTERM, SIGINT and --timeout, leaving nothing" {
	require_root
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	for how in TERM INT timeout; do
		name=stall-$(tr A-Z a-z <<<"$how") err=$BATS_TEST_TMPDIR/err.$how
		extra=()
		[ "$how" = timeout ] && extra=(--timeout 1)
		: >"$err"
		KERN_TEST_PAUSE=pid1-dev "$KERN_T" box "$name" "${extra[@]}" --image host -- true 2>"$err" &
		kpid=$!
		wait_for "$err" "paused at pid1-dev" 10
		[ "$how" = timeout ] || kill -"$how" "$kpid"
		for _ in $(seq 100); do kill -0 "$kpid" 2>/dev/null || break; sleep 0.05; done
		if kill -0 "$kpid" 2>/dev/null; then
			kill -KILL "$kpid"
			echo "$how: kern still running 5 s later"
			return 1
		fi
		rc=0
		wait "$kpid" || rc=$?
		cat "$err"
		case $how in
		TERM) [ "$rc" = 143 ] && grep -qx 'kern: sandbox setup failed: stopped by SIGTERM before the box started' "$err" ;;
		INT) [ "$rc" = 130 ] && grep -qx 'kern: sandbox setup failed: stopped by SIGINT before the box started' "$err" ;;
		timeout) [ "$rc" = 125 ] &&
			grep -qx 'kern: sandbox setup failed: the --timeout deadline (1 s) passed before the box started' "$err" ;;
		esac
		no_leftovers "$name"
		! find /sys/fs/cgroup -maxdepth 4 -name "kern-box-$name-*" 2>/dev/null | grep -q . || false
	done
}

@test "kern exec into a root-run box: box root is not host root there either" {
	require_root
	"$KERN" box ex1 -d --image host -v "$BATS_TEST_TMPDIR:/share" -- sleep 60 >/dev/null
	echo orig >"$BATS_TEST_TMPDIR/f"
	run "$KERN" exec ex1 -- sh -c 'id -u; id -G; head -1 /proc/self/uid_map; echo evil > /proc/self/fd/0; echo "write $?"' <"$BATS_TEST_TMPDIR/f"
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[ "$(echo "${lines[2]}" | tr -s ' ')" = " 0 $(root_base) 1" ]
	assert_line_re '^write [1-9]'
	[ "$(cat "$BATS_TEST_TMPDIR/f")" = orig ]
	run "$KERN" exec ex1 -- sh -c 'cp /usr/bin/id /share/x; chmod 4755 /share/x; echo "chmod $?"'
	assert_line_re '^chmod [1-9]'
	[ ! -u "$BATS_TEST_TMPDIR/x" ]
	"$KERN" stop ex1 >/dev/null
}

@test "the --plan chain of a root-run box maps, idmaps and restricts as kern box does" {
	require_root
	share=$BATS_TEST_TMPDIR/share
	mkdir "$share"
	plan=$("$KERN" box pl --image host -v "$share:/share" --plan -- sh -c '
head -1 /proc/self/uid_map; id -u; stat -c %u:%g /usr/bin/env
cp /usr/bin/id /share/x; chmod 4755 /share/x; echo "chmod $?"')
	[[ $plan == *"kern-seccomp "*"--restrict-sxid"* ]]
	run sh -c "$plan"
	assert_status 0
	[ "$(echo "${lines[0]}" | tr -s ' ')" = " 0 $(root_base) 1" ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = 0:0 ]
	assert_line_re '^chmod [1-9]'
	[ "$(stat -c '%u %a' "$share/x")" = "0 755" ]
	plan=$("$KERN" box pl2 --image host --map-host-root --plan -- head -1 /proc/self/uid_map)
	[[ $plan == *"kern-ns --map-host-root"* ]]
	run sh -c "$plan"
	[ "$(echo "$output" | tr -s ' ')" = " 0 0 1" ]
	# A stray KERN_NS_DEFER does not make kern-wait defer what kern-ns made.
	run env KERN_NS_DEFER=0,0,0,-1 sh -c "$plan"
	[ "$(echo "$output" | tr -s ' ')" = " 0 0 1" ]
}

@test "root's kern-ns with anything but kern-wait next refuses (125) instead of running it unboxed" {
	require_root
	# kern-ns defers root's namespaces to kern-wait; another NEXT would run
	# in the host's namespaces, as host root.
	run --separate-stderr "$KERN" ns -- sh -c 'echo ran; head -1 /proc/self/uid_map'
	assert_status 125
	[ -z "$output" ]
	[[ $stderr == "kern: sandbox setup failed: kern-ns: as root, box root is a subordinate id and the box's namespaces are made by kern-wait, which must come next (not 'sh'); --map-host-root has kern-ns make them itself" ]]
	# With --map-host-root kern-ns makes them: the command runs in a user
	# namespace mapping box root to host root.
	run "$KERN" ns --map-host-root -- sh -c 'head -1 /proc/self/uid_map'
	assert_status 0
	[ "$(echo "$output" | tr -s ' ')" = " 0 0 1" ]
	[ "$(readlink /proc/self/ns/user)" != "$("$KERN" ns --map-host-root -- readlink /proc/self/ns/user)" ]
}

@test "kern doctor says who box root is [rootless]" {
	run "$KERN" doctor
	if is_root; then
		assert_line_re "^  box root +[a-z]+ +host uid $(root_base), not host root"
		assert_line_re '--map-host-root'
	else
		assert_line_re "^  box root +ok +you \(uid $(id -u)\)"
	fi
}
