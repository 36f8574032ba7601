#!/usr/bin/env bats
# kern box: namespaces and the filesystem (security-tests.md section 2).
load helper

setup() { kern_private_dirs; }

@test "NS-1: hostname is the box name, only lo, no route out [rootless]" {
	run "$KERN" box nsone --image host -- sh -c 'hostname; cat /proc/net/dev'
	assert_status 0
	[ "${lines[0]}" = nsone ]
	n=$(grep -c ':' <<<"$output")
	[ "$n" -eq 1 ]
	assert_line_re '^ *lo:'
	run "$KERN" box nsone2 --image host -- python3 -c '
import socket, errno
s = socket.socket()
try:
    s.connect(("1.1.1.1", 53)); print("connected")
except OSError as e:
    print("refused", errno.errorcode[e.errno])'
	assert_status 0
	assert_line_re '^refused (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)$'
	run "$KERN" box nsone3 --image host --hostname other.example -- hostname
	[ "$output" = other.example ]
}

@test "NS-2: --net shares the host network: a host loopback service is reachable [rootless]" {
	python3 -m http.server --bind 127.0.0.1 0 >"$BATS_TEST_TMPDIR/http.log" 2>&1 &
	srv=$!
	port=""
	for i in $(seq 1 50); do
		port=$(ss -ltnp 2>/dev/null | awk -v p="pid=$srv," '$0 ~ p {split($4,a,":"); print a[2]}' | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ]
	run "$KERN" box net1 --image host --net -- python3 -c "
import urllib.request
print(urllib.request.urlopen('http://127.0.0.1:$port/').status)"
	kill $srv
	assert_status 0
	[ "$output" = 200 ]
	run "$KERN" box net2 --image host --network host -- cat /proc/net/dev
	n=$(grep -c ':' <<<"$output")
	[ "$n" -gt 1 ] || [ "$(ip -o link | wc -l)" -eq 1 ]
}

@test "NS-2: raw and packet sockets are refused in a box [rootless]" {
	# The box keeps CAP_NET_RAW, but only over its own user namespace: the
	# host network namespace (--net) belongs to the host's.
	run "$KERN" box raw1 --image host --net -- python3 -c '
import socket, errno
for fam, typ, proto in ((socket.AF_PACKET, socket.SOCK_RAW, 0),
                        (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)):
    try:
        socket.socket(fam, typ, proto); print("opened")
    except OSError as e:
        print(errno.errorcode[e.errno])'
	assert_status 0
	# AF_PACKET never reaches the kernel: seccomp refuses the family
	# (cve.bats, man kern-seccomp); the raw socket is the kernel's EPERM.
	[ "${lines[0]}" = EAFNOSUPPORT ] && [ "${lines[1]}" = EPERM ]
}

@test "NS-3: the box sees its own pids only [rootless]" {
	host=$(ls /proc | grep -c '^[0-9]')
	run "$KERN" box pids --image host -- sh -c 'ls /proc | grep -c "^[0-9]"; echo $$'
	assert_status 0
	[ "${lines[0]}" -lt 20 ]
	[ "${lines[0]}" -lt "$host" ]
	[ "${lines[1]}" = 2 ]
}

@test "NS-5: --no-uid-range maps exactly 0 -> the caller (root: its box root id) [rootless]" {
	run "$KERN" box map1 --image host --no-uid-range -- cat /proc/self/uid_map /proc/self/gid_map
	assert_status 0
	[ "$(echo "${lines[0]}" | tr -s ' ')" = " 0 $(box_root_uid) 1" ]
	[ "$(echo "${lines[1]}" | tr -s ' ')" = " 0 $(box_root_gid) 1" ]
	[ "${#lines[@]}" -eq 2 ]
	is_root || return 0
	run "$KERN" box map1h --image host --no-uid-range --map-host-root -- cat /proc/self/uid_map
	assert_status 0
	[ "$(echo "$output" | tr -s ' ')" = " 0 0 1" ]
}

@test "NS-5: --uid-range adds the subordinate range from /etc/subuid (root: the whole range from its box root id) [rootless]" {
	start=$(awk -F: -v u="$(id -un)" '$1 == u {print $2; exit}' /etc/subuid)
	count=$(awk -F: -v u="$(id -un)" '$1 == u {print $3; exit}' /etc/subuid)
	if is_root; then
		run "$KERN" box map2 --image host --uid-range -- cat /proc/self/uid_map
		assert_status 0
		[ "$(echo "$output" | tr -s ' ')" = " 0 $(box_root_uid) ${count:-65536}" ]
		[ -n "$start" ] || return 0
		run "$KERN" box map2h --image host --uid-range --map-host-root -- cat /proc/self/uid_map
		assert_status 0
		[ "$(echo "${lines[0]}" | tr -s ' ')" = " 0 0 1" ]
		[ "$(echo "${lines[1]}" | tr -s ' ')" = " 1 $start $count" ]
		return 0
	fi
	[ -n "$start" ] || skip "no /etc/subuid range for $(id -un)"
	run "$KERN" box map2 --image host --uid-range -- cat /proc/self/uid_map
	assert_status 0
	[ "$(echo "${lines[0]}" | tr -s ' ')" = " 0 $(id -u) 1" ]
	[ "$(echo "${lines[1]}" | tr -s ' ')" = " 1 $start $count" ]
}

@test "NS-4: --user 1000 in a range map runs as 1000 with NoNewPrivs [rootless]" {
	grep -q "^$(id -un):" /etc/subuid || skip "no /etc/subuid range for $(id -un)"
	r=$(mkrootfs)
	run "$KERN" box usr1 --rootfs "$r" --uid-range --user 1000 --quiet -- sh -c 'id -u; id -g; grep NoNewPrivs /proc/self/status'
	assert_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[[ ${lines[2]} == *"1" ]]
	run "$KERN" box usr2 --rootfs "$r" --user app:staff -- sh -c 'id -u; id -g'
	assert_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 50 ]
	run --separate-stderr "$KERN" box usr3 --rootfs "$r" --user ghost -- true
	assert_status 125
	[[ $stderr == "kern: sandbox setup failed: --user ghost: no user 'ghost'"* ]]
}

@test "--user root where the image's /etc/group lists root in other groups (Alpine's does): a single-id box runs it with the groups its id map holds, a range box with all [rootless]" {
	r=$BATS_TEST_TMPDIR/groups-root
	cp -a "$(mkrootfs)" "$r"
	printf 'root:x:0:root\ndisk:x:6:root,adm\nwheel:x:10:root\n' >"$r/etc/group"
	# Before, setgroups(2) refused the list (EINVAL with unmapped gids,
	# EPERM where a single-id map denies it) and the box never started.
	run --separate-stderr "$KERN" box gr1 --rootfs "$r" --no-uid-range --user root --quiet -- id -G
	assert_status 0
	[ "$output" = 0 ]
	grep -q "^$(id -un):" /etc/subuid || is_root || skip "no /etc/subuid range for $(id -un)"
	run --separate-stderr "$KERN" box gr2 --rootfs "$r" --uid-range --user root --quiet -- id -G
	assert_status 0
	[ "$output" = "0 6 10" ]
}

@test "MNT-1: a write to / under --ro fails with EROFS [rootless]" {
	run "$KERN" box ro1 --image host --ro -- python3 -c '
try:
    open("/evil", "w")
except OSError as e:
    print(e.strerror)'
	assert_status 0
	[ "$output" = "Read-only file system" ]
	r=$(mkrootfs)
	run "$KERN" box ro2 --rootfs "$r" --read-only -- sh -c 'touch /evil 2>&1; touch /dev/x 2>&1; echo ok > /dev/shm/x && echo shm-ok'
	[[ ${lines[0]} == *"Read-only file system"* ]]
	[[ ${lines[1]} == *"Read-only file system"* ]]
	[ "${lines[2]}" = shm-ok ]
}

@test "MNT-2: a host temp file is invisible by absolute path [rootless]" {
	echo secret >"$BATS_TEST_TMPDIR/hostfile"
	run "$KERN" box hid --image host -- cat "$BATS_TEST_TMPDIR/hostfile"
	[ "$status" -ne 0 ]
	[[ $output != *secret* ]]
}

@test "MNT-3: writable mounts under --ro are exactly /tmp, /workspace, /dev/shm, /dev/mqueue [rootless]" {
	ws=$BATS_TEST_TMPDIR/ws; mkdir -p "$ws"; writable_by_box "$ws"
	run "$KERN" box wr --image host --ro --tmpfs /tmp:64m -v "$ws:/workspace" -w /workspace -- python3 -c '
import os
found = []
for line in open("/proc/self/mounts"):
    mnt = line.split()[1].replace("\\040", " ")
    opts = line.split()[3].split(",")
    if "rw" in opts and os.path.isdir(mnt):
        try:
            p = os.path.join(mnt, ".kern-probe"); open(p, "w").close(); os.unlink(p)
            found.append(mnt)
        except OSError:
            pass
print(" ".join(sorted(found)))'
	assert_status 0
	[ "$output" = "/dev/mqueue /dev/shm /tmp /workspace" ]
}

@test "MNT-4: a deeper read-only bind wins inside a writable one [rootless]" {
	ws=$BATS_TEST_TMPDIR/ws; mkdir -p "$ws/.deps"; writable_by_box "$ws"
	run "$KERN" box nest --image host -v "$ws/.deps:/workspace/.deps:ro" -v "$ws:/workspace" -- sh -c '
touch /workspace/.deps/x 2>&1; touch /workspace/ok && echo wrote'
	assert_status 0
	[[ ${lines[0]} == *"Read-only file system"* ]]
	[ "${lines[1]}" = wrote ]
	[ -e "$ws/ok" ] && [ ! -e "$ws/.deps/x" ]
}

@test "MNT-5: a bind at /dev/shm wins over kern's tmpfs [rootless]" {
	d=$BATS_TEST_TMPDIR/shm; mkdir -p "$d"; echo mine >"$d/marker"
	run "$KERN" box shm --image host -v "$d:/dev/shm" -- cat /dev/shm/marker
	assert_status 0
	[ "$output" = mine ]
}

@test "MNT-6: --tmpfs is nosuid, refuses device nodes, allows exec, fills to ENOSPC; bad targets refused [rootless]" {
	run "$KERN" box tmp1 --image host --tmpfs /scratch:1m -- sh -c '
grep " /scratch " /proc/self/mounts
cp /bin/true /scratch/t && /scratch/t && echo exec-ok
mknod /scratch/n c 1 3 2>/dev/null && echo mknod-ok || echo mknod-refused
dd if=/dev/zero of=/scratch/fill bs=64k count=100 2>&1 | grep -o "No space left on device" | head -1
echo alive'
	assert_status 0
	[[ ${lines[0]} == *nosuid,nodev* ]]
	[ "${lines[1]}" = exec-ok ]
	[ "${lines[2]}" = mknod-refused ]
	[ "${lines[3]}" = "No space left on device" ]
	[ "${lines[4]}" = alive ]
	for t in /dev/shm /proc/x //dev /sys /; do
		run --separate-stderr "$KERN" box tmp2 --image host --tmpfs "$t:1m" -- true
		assert_status 1
		[[ $stderr == "error: box: bad --tmpfs"* ]]
	done
}

@test "MNT-7: -v targets through a symlink, with .., or at / /proc /sys /dev //dev are refused [rootless]" {
	for t in /a/../b /proc /sys /dev //dev / relative /proc/sys/x; do
		run --separate-stderr "$KERN" box mnt7 --image host -v "$BATS_TEST_TMPDIR:$t" -- true
		assert_status 1
		[[ $stderr == "error: box: bad -v"* ]]
	done
	r=$(mkrootfs); ln -sfn /tmp "$r/via"
	run --separate-stderr "$KERN" box mnt7b --rootfs "$r" -v "$BATS_TEST_TMPDIR:/via/x" -- true
	assert_status 125
}

@test "MNT-8: a bind source swapped for a symlink during validation is never followed [rootless]" {
	base=$BATS_TEST_TMPDIR/race; mkdir -p "$base/real/dir" "$base/secret"
	echo SECRET >"$base/secret/file"
	( for i in $(seq 1 3000); do
		mv -T "$base/real" "$base/tmp" 2>/dev/null; ln -sfn "$base/secret" "$base/real"
		rm -f "$base/real"; mv -T "$base/tmp" "$base/real" 2>/dev/null
	  done ) &
	swapper=$!
	leaked=0
	for i in $(seq 1 60); do
		out=$("$KERN" box race$i --image host -v "$base/real/dir:/mnt/x" -- cat /mnt/x/file 2>/dev/null || true)
		[[ $out == *SECRET* ]] && leaked=1
		out=$("$KERN" box race$i --image host -v "$base/real:/mnt" -- cat /mnt/file 2>/dev/null || true)
		[[ $out == *SECRET* ]] && leaked=1
	done
	kill $swapper 2>/dev/null || true
	wait $swapper 2>/dev/null || true
	[ "$leaked" -eq 0 ]
}

@test "MNT-9: an image whose /dev is a symlink gets kern's /dev tmpfs [rootless]" {
	r=$BATS_TEST_TMPDIR/devlink; cp -a "$(mkrootfs)" "$r"; rm -rf "$r/dev"; ln -s /host "$r/dev"
	run "$KERN" box dev1 --rootfs "$r" -- sh -c 'grep " /dev " /proc/self/mounts; ls /dev'
	assert_status 0
	[[ ${lines[0]} == "tmpfs /dev tmpfs"* ]]
	[ -L "$r/dev" ]
}

@test "MNT-10: /proc masks, no /sys, no host devices [rootless]" {
	run "$KERN" box mask --image host -- sh -c '
for f in /proc/kallsyms /proc/kcore /proc/keys /proc/timer_list; do
  [ -e $f ] && printf "%s:%s\n" $f "$(head -c 64 $f | tr -d "\0" | wc -c)"
done
(echo 1 > /proc/sys/kernel/hostname) 2>&1 | grep -o "Read-only file system"
echo x > /proc/sysrq-trigger 2>/dev/null && echo sysrq-written || echo sysrq-refused
echo x > /proc/sys/kernel/core_pattern 2>/dev/null && echo core-written || echo core-refused
ls /sys/kernel 2>/dev/null && echo sys-present || echo sys-absent
for d in /dev/mem /dev/kmem /dev/sda /dev/vda /dev/tty; do [ -e $d ] && echo "$d present"; done
mknod /tmp/sda b 8 0 2>/dev/null && echo mknod-ok || echo mknod-refused
ls /dev | tr "\n" " "'
	assert_status 0
	refute_line_re '^/proc/(kallsyms|kcore|keys|timer_list):[1-9]'
	assert_line_re '^Read-only file system$'
	assert_line_re '^sysrq-refused$'
	assert_line_re '^core-refused$'
	assert_line_re '^sys-absent$'
	refute_line_re 'present$'
	assert_line_re '^mknod-refused$'
	[ "${lines[-1]}" = "fd full mqueue null random shm stderr stdin stdout urandom zero " ]
}

@test "MNT-11: writes in one box are invisible to the next; the lower is unchanged [rootless]" {
	r=$(mkrootfs)
	before=$(find "$r" -printf '%p %s %m\n' | sort | sha256sum)
	run "$KERN" box w1 --rootfs "$r" -- sh -c 'echo x > /bin/planted; echo y > /etc/passwd; rm /bin/ls'
	assert_status 0
	run "$KERN" box w2 --rootfs "$r" -- sh -c 'ls /bin/planted 2>&1; head -1 /etc/passwd'
	[[ ${lines[0]} == *"No such file"* ]]
	[[ ${lines[1]} == root:* ]]
	[ "$(find "$r" -printf '%p %s %m\n' | sort | sha256sum)" = "$before" ]
}

@test "MNT-12: -v of kern's runtime, cache, config or data dir, an ancestor, or an alias is refused [rootless]" {
	mkdir -p "$XDG_RUNTIME_DIR/kern" "$XDG_CACHE_HOME/kern/images" "$XDG_CONFIG_HOME/kern" "$XDG_DATA_HOME/kern"
	for src in "$XDG_RUNTIME_DIR/kern" "$XDG_CACHE_HOME/kern/images" "$XDG_CONFIG_HOME/kern" \
		   "$XDG_DATA_HOME/kern" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR/kern/scratch" "$BATS_FILE_TMPDIR"; do
		run --separate-stderr "$KERN" box m12 --image host -v "$src:/x" -- true
		assert_status 1
		[[ $stderr == *"overlaps kern's own state"* ]]
	done
	ln -s "$XDG_CACHE_HOME/kern" "$BATS_TEST_TMPDIR/alias"
	run --separate-stderr "$KERN" box m12 --image host -v "$BATS_TEST_TMPDIR/alias:/x" -- true
	assert_status 1
}

@test "MNT-12: a bind-mount alias of the cache (same device and inode) is refused" {
	require_root
	mkdir -p "$XDG_CACHE_HOME/kern/images" "$BATS_TEST_TMPDIR/alias"
	unshare -m sh -c "mount --bind '$XDG_CACHE_HOME/kern' '$BATS_TEST_TMPDIR/alias' &&
		'$KERN' box m12b --image host -v '$BATS_TEST_TMPDIR/alias:/x' -- true" 2>"$BATS_TEST_TMPDIR/err" && false
	grep -q "overlaps kern's own state" "$BATS_TEST_TMPDIR/err"
	# Inside the alias: the state dir itself, reached through it.
	unshare -m sh -c "mount --bind '$XDG_CACHE_HOME/kern' '$BATS_TEST_TMPDIR/alias' &&
		'$KERN' box m12b --image host -v '$BATS_TEST_TMPDIR/alias/images:/x' -- true" 2>"$BATS_TEST_TMPDIR/err" && false
	grep -q "overlaps kern's own state" "$BATS_TEST_TMPDIR/err"
}

# The mount table kern starts its boxes from, before, during and after:
# one file each in $1.
mnt13_tables() {
	cut -d' ' -f5 /proc/self/mountinfo | sort >"$1/before"
	"$KERN" box mi --image host -- sleep 2 &
	sleep 0.5
	cut -d' ' -f5 /proc/self/mountinfo | sort >"$1/during"
	for i in $(seq 1 50); do "$KERN" box "mi$i" --image host -- true; done
	wait
	cut -d' ' -f5 /proc/self/mountinfo | sort >"$1/after"
}

@test "MNT-13: host mountinfo is unchanged before, during and after 50 boxes [rootless]" {
	local d=$BATS_TEST_TMPDIR
	if is_root; then
		# In a private copy of the host's mount namespace, which kern starts
		# from and only kern changes: other suites of make check mount
		# and unmount on the host meanwhile, and must not count here.
		export -f mnt13_tables
		KERN=$KERN unshare -m --propagation private bash -c 'mnt13_tables "$1"' _ "$d"
	else
		# An unprivileged caller's kern cannot mount in the host's
		# namespace at all; root's other tests can, so the whole table is
		# compared and a difference is looked at again: kern's own leak
		# shows every time, a neighbour's mount once.
		for _ in 1 2 3; do
			mnt13_tables "$d"
			cmp -s "$d/before" "$d/during" && cmp -s "$d/before" "$d/after" && break
			echo "mount table changed (retrying):"
			diff "$d/before" "$d/during" || true
			diff "$d/before" "$d/after" || true
		done
	fi
	diff "$d/before" "$d/during" && diff "$d/before" "$d/after"
}

@test "MNT-14: --image host shows only the system dirs and kern's /etc [rootless]" {
	run "$KERN" box hostimg --image host -- sh -c '
ls /; echo ---; ls /etc; echo ---
for p in /etc/shadow /root/.ssh /home /var /run /srv /opt /mnt /media /etc/hostname /etc/ssh; do
  [ -e $p ] && [ "$(ls -A $p 2>/dev/null)" != "" -o -f $p ] && echo "visible $p"
done
cat /etc/passwd; touch /usr/x 2>&1; true'
	assert_status 0
	top=$(sed -n '1,/^---$/p' <<<"$output" | grep -v -- --- | tr '\n' ' ')
	for d in $top; do
		case $d in usr|bin|sbin|lib|lib32|lib64|libx32|etc|dev|proc|tmp|root) ;; *) echo "unexpected /$d"; return 1 ;; esac
	done
	etc=$(sed -n '/^---$/,/^---$/p' <<<"$output" | grep -v -- --- | tr '\n' ' ')
	for f in $etc; do
		case $f in passwd|group|hosts|nsswitch.conf|ld.so.cache|ld.so.conf|ld.so.conf.d|alternatives|ssl|ca-certificates|localtime|os-release|resolv.conf|matplotlibrc|fonts) ;;
		*) echo "unexpected /etc/$f"; return 1 ;; esac
	done
	refute_line_re '^visible '
	[ "$(grep -c ':x:' <<<"$output")" -eq 2 ]
	assert_line_re 'Read-only file system'
}

@test "--image host: Debian's matplotlib imports and draws (its defaults live in /etc/matplotlibrc) [rootless]" {
	[ -f /etc/matplotlibrc ] || skip "python3-matplotlib is not installed on this host"
	run --separate-stderr "$KERN" box mpl --image host -- python3 -c '
import matplotlib; matplotlib.use("Agg")
import matplotlib.pyplot as plt, io
plt.plot([1, 2, 3]); b = io.BytesIO(); plt.savefig(b, format="png")
print(matplotlib.matplotlib_fname(), b.getvalue()[:4] == b"\x89PNG")'
	assert_status 0
	[ "$output" = "/etc/matplotlibrc True" ]
	[ -z "$stderr" ]
}

@test "--workdir is created and used; image default is / [rootless]" {
	run "$KERN" box wd --image host -w /made/here -- pwd
	assert_status 0
	[ "$output" = /made/here ]
	run "$KERN" box wd2 --image host -- pwd
	[ "$output" = / ]
}

@test "--bind-rootfs writes land in the directory; overlay writes do not [rootless]" {
	r=$BATS_TEST_TMPDIR/br; cp -a "$(mkrootfs)" "$r"
	run "$KERN" box br1 --rootfs "$r" --bind-rootfs -- sh -c 'echo kept > /kept'
	assert_status 0
	[ "$(cat "$r/kept")" = kept ]
	run "$KERN" box br2 --rootfs "$r" -- sh -c 'echo gone > /gone'
	[ ! -e "$r/gone" ]
	run "$KERN" box br3 --rootfs "$r" --bind-rootfs --ro -- true
	assert_status 1
}

@test "--mount noexec: nothing on the bind (or a mount below it) executes; without it, the same file runs [rootless]" {
	d=$BATS_TEST_TMPDIR/nx; mkdir -p "$d"
	printf '#!/bin/sh\necho ran\n' >"$d/x"; chmod 755 "$d/x"
	writable_by_box "$d"
	run "$KERN" box nx1 -q --image host --mount "type=bind,src=$d,dst=/nx,noexec" -- sh -c '/nx/x; echo "rc=$?"'
	assert_status 0
	assert_line_re "^rc=126$"
	! grep -qx ran <<<"$output" || false
	run "$KERN" box nx2 -q --image host --mount "type=bind,src=$d,dst=/nx,ro,noexec" -- \
		sh -c 'grep " /nx " /proc/self/mounts'
	assert_status 0
	[[ $output == *" ro,"*noexec* ]]
	run "$KERN" box nx3 -q --image host --mount "type=bind,src=$d,dst=/nx" -- /nx/x
	assert_status 0
	[ "$output" = ran ]
	run "$KERN" box nx4 -q --image host --mount "type=bind,src=$d,dst=/nx,noexec=1" -- true
	assert_status 1
}

@test "a missing -v source is created 0700 and caller-owned; a missing --mount source is refused [rootless]" {
	src=$BATS_TEST_TMPDIR/new/deeper
	run "$KERN" box src1 --image host -v "$src:/data" -- sh -c 'echo hi > /data/f'
	assert_status 0
	[ "$(stat -c '%a %u' "$src")" = "700 $(id -u)" ]
	[ "$(stat -c %u "$src/f")" = "$(id -u)" ]
	run --separate-stderr "$KERN" box src2 --image host --mount "type=bind,src=$BATS_TEST_TMPDIR/absent,dst=/data" -- true
	assert_status 125
	d="$BATS_TEST_TMPDIR/with,comma:colon"; mkdir -p "$d"; echo q >"$d/f"
	run "$KERN" box src3 --image host --mount "type=bind,\"src=$d\",dst=/q,ro" -- cat /q/f
	assert_status 0
	[ "$output" = q ]
}
