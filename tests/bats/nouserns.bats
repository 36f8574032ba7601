#!/usr/bin/env bats
# Hosts where CLONE_NEWUSER is refused (issue 19): the static kern in a
# chroot (tests/bats/chroot.bash), where the kernel refuses it to root as
# well. kern box, kern-ns and kern doctor must name the real cause, the
# chroot, with its fix, not the Debian sysctl. Root still boxes there,
# without a user namespace (--userns=auto falls back, --userns=no forces
# it): the workload is an unprivileged host uid with no capabilities, and
# the escapes box root could try there fail. Root only (chroot, mount):
# as another user every test skips, saying so.
load helper
load chroot
load plan
load ../helpers/fixtures

setup() {
	chroot_make || return 1
}

teardown() {
	chroot_destroy
}

# The cause line kern prints in this chroot, for CALL (clone or unshare)
# and HOW (how kern told the chroot, a regex).
chroot_cause_re() {
	echo "^kern: sandbox setup failed: $1\(CLONE_NEWUSER\|CLONE_NEWPID\|\.\.\.\): Operation not permitted: kern runs in a chroot \($2\), and the kernel refuses new user namespaces to any chrooted process, root included$"
}
CHROOT_HINT_RE='^hint: run kern outside the chroot, or enter the tree with pivot_root\(2\) in a new mount namespace instead of chroot\(2\)$'

# refused_in_chroot IDS CALL HOW CMD...: CMD, run in the chroot as IDS
# (uid:gid), exits 125 with nothing on stdout, the chroot cause line for
# CALL and HOW (chroot_cause_re) and the hint, and no sysctl guess.
refused_in_chroot() {
	local ids=$1 call=$2 how=$3
	shift 3
	run --separate-stderr chroot_run_as "$ids" "$@"
	assert_status 125
	[ -z "$output" ] || { echo "stdout (the workload ran, or a name was printed): $output"; return 1; }
	output=$stderr
	assert_line_re "$(chroot_cause_re "$call" "$how")"
	assert_line_re "$CHROOT_HINT_RE"
	refute_line_re 'unprivileged_userns_clone|max_user_namespaces|AppArmor'
}

# No kern record, scratch directory or process is left in the chroot.
chroot_no_leftovers() {
	local rt=$CHROOT/tmp/kern-$1
	[ -z "$(ls -A "$rt/instances" 2>/dev/null)" ] || { echo "records left:"; ls -la "$rt/instances"; return 1; }
	[ -z "$(ls -A "$rt/scratch" 2>/dev/null)" ] || { echo "scratch left:"; ls -la "$rt/scratch"; return 1; }
	[ -z "$(chroot_procs)" ] || { echo "processes left: $(chroot_procs)"; return 1; }
}

@test "nouserns: in the chroot the kernel refuses CLONE_NEWUSER to root (EPERM), and still grants pid, net, ipc and uts namespaces" {
	run chroot_run unshare -U true
	[ "$status" -ne 0 ] || { echo "unshare -U succeeded in the chroot: it cannot stand for a host without user namespaces"; return 1; }
	assert_line_re 'Operation not permitted'
	# (Not -m: busybox's unshare then re-marks "/" private, which fails
	# with EINVAL where "/" is not a mount point, as in this chroot.)
	run chroot_run unshare -p -n -i -u -f true
	assert_status 0
	# Outside the chroot the same call works: the chroot is the cause.
	run unshare -U true
	assert_status 0
}

@test "nouserns: kern box --userns=yes as root in a chroot exits 125 naming the chroot, not the sysctl, with the fix on a hint line" {
	refused_in_chroot 0:0 clone '/ is not the root of its mount namespace' \
		/kern box t --userns=yes --rootfs /rootfs -- /bin/sh -c 'echo ran'
}

@test "nouserns: a chroot into a bind mount of / (the very inode of the namespace's /) is named as a chroot too, by its mount" {
	# The bind exists only in a mount namespace of this command's own: it
	# goes with it, and the host keeps an empty directory.
	local d=$BATS_TEST_TMPDIR/bindroot
	mkdir "$d"
	run --separate-stderr unshare -m --propagation private sh -c \
		'mount --rbind / "$1" && exec chroot "$1" "$2" box t --userns=yes --image host -- /bin/sh -c "echo ran"' \
		sh "$d" "$CHROOT_KERN"
	rmdir "$d"
	assert_status 125
	[ -z "$output" ]
	output=$stderr
	assert_line_re "$(chroot_cause_re clone '/ is not the root of its mount namespace')"
	assert_line_re "$CHROOT_HINT_RE"
}

@test "nouserns: a chroot that is a mount point under a shared mount (as systemd makes them) boxes too: pivot_root's refusal is met from a copy of /" {
	chroot_mount_cgroups
	# pivot_root(2) refuses when the mount above the current root is
	# shared; in a chroot that mount is out of reach. The mounts exist only
	# in a mount namespace of this command's own.
	run --separate-stderr unshare -m --propagation private sh -c \
		'mount --make-rshared / && mount --rbind "$1" "$1" &&
		exec env -i PATH=/bin HOME=/root "$2" "$1" /kern box t -q --rootfs /rootfs -- sh -c "id -u; cat /proc/self/mountinfo"' \
		sh "$CHROOT" "$CHROOT_BIN"
	assert_status 0
	[ "${lines[0]}" = 65534 ] || { echo "stderr: $stderr"; return 1; }
	# Only the box's own mounts: no copy of the chroot's tree shows.
	refute_line_re ' /rootfs | /kern '
}

@test "nouserns: kern box as an unprivileged user in a chroot names the chroot too (told without setns, from init's root or mountinfo)" {
	refused_in_chroot 65534:65534 clone '/ is not /proc/1/root|no mount is at /' \
		/kern box t --rootfs /rootfs -- /bin/sh -c 'echo ran'
}

@test "nouserns: a box whose clone is refused leaves no record, scratch directory, box cgroup or process, as root and as a user" {
	chroot_mount_cgroups
	local name=leak-$$ ids
	for ids in 0:0 65534:65534; do
		run --separate-stderr chroot_run_as "$ids" /kern box "$name" --userns=yes --rootfs /rootfs -- /bin/true
		assert_status 125
		chroot_no_leftovers "${ids%%:*}"
		run find "$CHROOT/sys/fs/cgroup" -maxdepth 6 -type d -name "kern-box-$name-*"
		[ -z "$output" ] || { echo "box cgroups left (as $ids):"; echo "$output"; return 1; }
	done
}

@test "nouserns: kern box -d --userns=yes in a chroot: the launcher prints the cause and its hint, exits 125, and nothing is left" {
	refused_in_chroot 0:0 clone '/ is not the root of its mount namespace' \
		/kern box dt -d --userns=yes --rootfs /rootfs -- /bin/sleep 60
	chroot_no_leftovers 0
}

@test "nouserns: kern-ns, the chain's namespace step, names the chroot from its unshare" {
	# (root's kern-ns makes the namespaces itself only with --map-host-root;
	# otherwise kern-wait, next in the chain, clones into them: box -d above)
	refused_in_chroot 0:0 unshare '/ is not the root of its mount namespace' \
		/kern ns --map-host-root -- /bin/sh -c 'echo ran'
}

@test "nouserns: kern doctor in a chroot names the chroot in its user-namespace row, with the fix; as root the box mode is no-userns, not a problem" {
	run --separate-stderr chroot_run /kern doctor
	assert_line_re '^  user namespaces +NO +unshare\(CLONE_NEWUSER\): Operation not permitted: kern runs in a chroot \(/ is not the root of its mount namespace\), and the kernel refuses new user namespaces to any chrooted process, root included; boxes run without one \(root mode\)$'
	assert_line_re '^ {28}fix: run kern outside the chroot, or enter the tree with pivot_root\(2\) in a new mount namespace instead of chroot\(2\)$'
	assert_line_re '^  box mode +no-userns +every namespace but the user one; the workload runs as uid 65534 \(or --user\) with no capabilities \(--userns=no\)$'
	assert_line_re '^  box root +- +no user namespace: box root would be host root'
	refute_line_re 'unprivileged_userns_clone|no box can start'
	assert_line_re '^  overlay in userns +- +not needed'
	# As a user the same refusal still means no box at all, and exit 2.
	run --separate-stderr chroot_run_as 65534:65534 /kern doctor
	assert_status 2
	assert_line_re '^  user namespaces +NO .*kern runs in a chroot .*; no box can start$'
	refute_line_re '^  box mode'
	assert_line_re '^  overlay in userns +- +needs user namespaces$'
}

@test "nouserns: without /proc in the chroot kern box and kern doctor say /proc is not mounted, and how to mount it" {
	chroot_umount_proc
	run --separate-stderr chroot_run /kern box t --userns=yes --rootfs /rootfs -- /bin/true
	assert_status 125
	output=$stderr
	assert_line_re '^kern: sandbox setup failed: clone\(CLONE_NEWUSER\|CLONE_NEWPID\|\.\.\.\): Operation not permitted: /proc is not mounted here, so kern cannot tell why \(a chroot without /proc\?\)$'
	assert_line_re '^hint: mount -t proc proc /proc$'
	run --separate-stderr chroot_run /kern doctor
	assert_status 2
	assert_line_re '^  user namespaces +NO +unshare\(CLONE_NEWUSER\): Operation not permitted: /proc is not mounted here'
	assert_line_re '^ +fix: mount -t proc proc /proc$'
}

@test "nouserns: the harness mounts the host's cgroup hierarchies in the chroot, where kern doctor finds memory and pids caps in force and, as root, exits 0" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern doctor
	assert_status 0
	assert_line_re '^  caps as this user +ok +memory pids'
	assert_line_re '^  user namespaces +NO .*kern runs in a chroot'
	assert_line_re '^  box mode +no-userns '
	# chroot_destroy (teardown) unmounts them all and removes the tree.
	local c=$CHROOT
	chroot_destroy
	run grep -F " $c/" /proc/self/mountinfo
	assert_status 1
	[ ! -e "$c" ]
}

# ---- root's boxes without a user namespace (kern box --userns=auto|no) ----

# What a box says about its own identity and lockdown.
IDENT='id -u; id -g; id -G; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status'
IDENT_NOBODY=$'65534\n65534\n65534\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2'

# The tests below mount the host's cgroup hierarchies in the chroot
# (chroot_mount_cgroups) so that root's boxes get their caps and print no
# warning about them.

# sup_of NAME: the supervisor pid in root's record of box NAME in the chroot.
# has_line TEXT / lacks_line TEXT: some / no line of $output is exactly TEXT.
has_line() { grep -qxF -- "$1" <<<"$output" || { echo "no line '$1' in:"; echo "$output"; return 1; }; }
lacks_line() { ! grep -qxF -- "$1" <<<"$output" || { echo "a line '$1' in:"; echo "$output"; return 1; }; }

# detached NAME: as root in the chroot, box NAME (sleep 300) with -d and
# its cgroups in place; sup is its supervisor's pid, alive.
detached() {
	chroot_mount_cgroups
	run chroot_run /kern box "$1" -d -q --rootfs /rootfs -- sleep 300
	assert_status 0
	sup=$(sup_of "$1")
	[ -n "$sup" ] && kill -0 "$sup"
}

sup_of() { awk -F'\t' '$1 == "supervisor" { print $2 }' "$CHROOT/tmp/kern-0/instances/$1"; }

@test "nouserns: as root in the chroot kern box boxes without a user namespace: one note naming the chroot, the workload uid 65534 with no capabilities, no_new_privs and seccomp" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t --rootfs /rootfs -- sh -c "$IDENT"
	assert_status 0
	[ "$output" = "$IDENT_NOBODY" ] || { diff <(echo "$IDENT_NOBODY") <(echo "$output"); return 1; }
	[ "${#stderr_lines[@]}" = 1 ] || { echo "stderr: $stderr"; return 1; }
	local note_re='^kern: note: no user namespace here \(clone\(CLONE_NEWUSER\): Operation not permitted: kern runs in a chroot .*\); boxing without one: the workload runs as uid 65534:65534 with no capabilities \(--userns=no\)$'
	[[ ${stderr_lines[0]} =~ $note_re ]] || { echo "note: ${stderr_lines[0]}"; return 1; }
	# --userns=no says nothing; -q silences the note of auto.
	run --separate-stderr chroot_run /kern box t --userns=no --rootfs /rootfs -- sh -c "$IDENT"
	assert_status 0
	[ "$output" = "$IDENT_NOBODY" ]
	[ -z "$stderr" ]
	run --separate-stderr chroot_run /kern box t -q --rootfs /rootfs -- true
	assert_status 0
	[ -z "$stderr" ]
	chroot_no_leftovers 0
}

@test "nouserns: root's unprobed start, refused its user namespace, starts again without one: one A on the alive pipe, each line once, no marker in the box, nothing left" {
	# Root's plain foreground box does not probe for user namespaces (the
	# probe clone costs a start about 5%): it assumes one and, refused,
	# undoes what it made and runs kern box again, which probes.
	chroot_mount_cgroups
	local alive=$BATS_TEST_TMPDIR/alive
	run --separate-stderr env -i PATH=/bin HOME=/root KERN_ALIVE_FD=3 "$CHROOT_BIN" "$CHROOT" \
		/kern box t --security-profile untrusted --rootfs /rootfs -- sh -c 'id -u; env | grep -c KERN_INTERNAL || true' 3>"$alive"
	assert_status 0
	[ "${lines[0]}" = 65534 ]
	[ "${lines[1]}" = 0 ] || { echo "the second-start marker reached the box"; return 1; }
	[ "$(cat "$alive")" = A ] || { echo "alive pipe: $(od -c "$alive")"; return 1; }
	[ "$(grep -c '^kern: security-profile=untrusted' <<<"$stderr")" = 1 ] || { echo "stderr: $stderr"; return 1; }
	[ "$(grep -c '^kern: note: no user namespace here' <<<"$stderr")" = 1 ] || { echo "stderr: $stderr"; return 1; }
	[ "${#stderr_lines[@]}" = 2 ] || { echo "stderr: $stderr"; return 1; }
	# A failing workload's status comes through the second start unchanged.
	run --separate-stderr chroot_run /kern box t -q --rootfs /rootfs -- sh -c 'exit 7'
	assert_status 7
	[ -z "$stderr" ]
	# That it was a second start: kern ran itself again, from its image.
	if command -v strace >/dev/null; then
		local log=$BATS_TEST_TMPDIR/strace
		run strace -qq -e trace=execveat -o "$log" env -i PATH=/bin HOME=/root "$CHROOT_BIN" "$CHROOT" /kern box t -q --rootfs /rootfs -- true
		assert_status 0
		grep -q 'execveat(.*"kern", "box", "t"' "$log" || { cat "$log"; return 1; }
	else
		echo "# strace missing: the second start itself not observed" >&3
	fi
	chroot_no_leftovers 0
}

@test "nouserns: outside a chroot root's default box gets its user namespace without a probe clone, and a forged second-start marker changes nothing" {
	command -v strace >/dev/null || skip "needs strace to count the clones (apt-get install strace)"
	local log=$BATS_TEST_TMPDIR/strace
	run strace -f -qq -e trace=clone,clone3 -o "$log" "$KERN" box t -q --rootfs "$CHROOT/rootfs" -- cat /proc/self/uid_map
	assert_status 0
	[ "$(wc -l <<<"$output")" = 1 ]
	[ "$(awk '{print $1}' <<<"$output")" = 0 ]
	[ "$(grep -c CLONE_NEWUSER "$log")" = 1 ] || { cat "$log"; return 1; }
	# The marker is kern's own; set by a caller it only makes kern probe.
	run env KERN_INTERNAL_SECOND_START=1 "$KERN" box t -q --rootfs "$CHROOT/rootfs" -- cat /proc/self/uid_map
	assert_status 0
	[ "$(awk '{print $1}' <<<"$output")" = 0 ]
	[ "$(wc -l <<<"$output")" = 1 ]
}

@test "nouserns: the box has its own pid, mount, net, uts and ipc namespaces, the /proc masks and kern's /dev" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t --hostname inbox --userns=no --rootfs /rootfs -- sh -c \
		'hostname; echo $$; ls /proc | grep -c "^[0-9]"; cat /proc/net/dev | grep -c ":"; ls /dev | tr "\n" " "; echo; wc -c </proc/kallsyms; awk "\$2 == \"/proc/sys\" {print \$2, substr(\$4, 1, 2)}" /proc/self/mounts'
	assert_status 0
	[ "${lines[0]}" = inbox ]
	[ "${lines[1]}" = 2 ]	# PID 1 is kern's init, the shell its child
	[ "${lines[2]}" -le 4 ] || { echo "processes seen: ${lines[2]}"; return 1; }	# init, sh, ls, grep
	[ "${lines[3]}" = 1 ] || { echo "network devices: ${lines[3]} (only lo expected)"; return 1; }
	[ "${lines[4]}" = "fd full mqueue null random shm stderr stdin stdout urandom zero " ] || { echo "/dev: ${lines[4]}"; return 1; }
	[ "${lines[5]}" = 0 ] || { echo "/proc/kallsyms is not masked: ${lines[5]} bytes"; return 1; }
	[ "${lines[6]}" = "/proc/sys ro" ]
}

@test "nouserns: --user and a non-root image USER stand; --user 0 needs --workload-is-host-root (exit 1, one line); --cap-add is refused" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t -q --user 1000:1000 --rootfs /rootfs -- sh -c 'id -u; id -g; grep ^CapEff /proc/self/status'
	assert_status 0
	[ "$output" = $'1000\n1000\nCapEff:\t0000000000000000' ]
	run --separate-stderr chroot_run /kern box t -q --user root --rootfs /rootfs -- id -u
	assert_status 1
	[ -z "$output" ]
	[ "$stderr" = "error: box: --user root is host uid or gid 0 in a box without a user namespace; --workload-is-host-root allows it" ]
	run --separate-stderr chroot_run /kern box t -q --cap-add NET_RAW --rootfs /rootfs -- id -u
	assert_status 1
	[[ $stderr == "error: box: --cap-add needs a user namespace"* ]]
}

@test "nouserns: --workload-is-host-root runs it as uid 0 with one warning, and still no capability, no_new_privs and seccomp" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t --userns=no --workload-is-host-root --rootfs /rootfs -- sh -c "$IDENT"
	assert_status 0
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[[ $output == *$'CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000'* ]]
	[[ $output == *$'NoNewPrivs:\t1\nSeccomp:\t2'* ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[[ ${stderr_lines[0]} == "kern: warning: --workload-is-host-root: this box has no user namespace"* ]]
	# uid 0 even so cannot mount, chroot or write the root-owned host files it sees.
	run chroot_run /kern box t -q --userns=no --workload-is-host-root --rootfs /rootfs -- sh -c \
		'mount -t tmpfs x /tmp && echo MOUNTED; busybox chroot / true && echo CHROOTED; exit 0'
	lacks_line MOUNTED
	lacks_line CHROOTED
}

@test "nouserns: --userns=no as a user is refused (exit 1, one line); --workload-is-host-root with --userns=yes too" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run_as 65534:65534 /kern box t --userns=no --rootfs /rootfs -- true
	assert_status 1
	[ "$stderr" = "error: box: --userns=no needs root" ]
	run --separate-stderr chroot_run /kern box t --userns=yes --workload-is-host-root --rootfs /rootfs -- true
	assert_status 1
	[[ $stderr == "error: box: --workload-is-host-root applies only to root's boxes without a user namespace"* ]]
	run --separate-stderr chroot_run /kern box t --userns=maybe --rootfs /rootfs -- true
	assert_status 1
	[ "$stderr" = "error: box: --userns takes auto, yes or no, not 'maybe'" ]
}

@test "nouserns: escapes fail: mount, unshare -U, chroot, pivot_root, setns, ptrace of PID 1, AF_PACKET and raw IP sockets" {
	chroot_mount_cgroups
	cp "$TREE/build/helpers/probe" "$CHROOT/probe"
	# x86_64 numbers: socket 41 (AF_PACKET 17, AF_INET 2; SOCK_RAW 3), ptrace 101 (PTRACE_ATTACH 16).
	# The probe prints "ok N" only if the call succeeded (errno or SIGSYS otherwise).
	run --separate-stderr chroot_run /kern box t -q -v /probe:/probe:ro --rootfs /rootfs -- sh -c '
		/probe 41 17 3 0 | grep "^ok" && echo ESCAPE packet
		/probe 41 2 3 1 | grep "^ok" && echo ESCAPE raw-ip
		/probe 101 16 1 0 0 | grep "^ok" && echo ESCAPE ptrace-pid1
		mount -t tmpfs x /tmp 2>/dev/null && echo ESCAPE mount
		busybox unshare -U true 2>/dev/null && echo ESCAPE unshare-U
		busybox unshare -m true 2>/dev/null && echo ESCAPE unshare-m
		busybox chroot / true 2>/dev/null && echo ESCAPE chroot
		mkdir -p /tmp/new && busybox pivot_root /tmp /tmp/new 2>/dev/null && echo ESCAPE pivot_root
		busybox nsenter -t 1 -m true 2>/dev/null && echo ESCAPE nsenter
		echo done'
	assert_status 0
	refute_line_re '^ESCAPE'
	has_line done
}

@test "nouserns: the supervisor is out of reach: not visible, not signalable, and kill -KILL -1 in the box leaves it and PID 1 running" {
	local sup
	detached sup
	run --separate-stderr chroot_run /kern box t -q -e SUP="$sup" --rootfs /rootfs -- sh -c \
		'kill -0 $SUP 2>/dev/null && echo ESCAPE signal; [ -e /proc/$SUP/status ] && echo ESCAPE visible; kill -KILL -1; echo survived'
	assert_status 0
	refute_line_re '^ESCAPE'
	has_line survived
	kill -0 "$sup"
	kill -TERM "$sup"
	for _ in $(seq 50); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$sup" 2>/dev/null || false
}

@test "nouserns: root-owned host files stay unwritten through :ro and rw binds, and no file lands in a root-owned directory" {
	chroot_mount_cgroups
	mkdir "$CHROOT/hostdir"
	echo original >"$CHROOT/hostdir/f"
	chmod 0644 "$CHROOT/hostdir/f"
	chmod 0755 "$CHROOT/hostdir"
	run chroot_run /kern box t -q -v /hostdir:/rw -v /hostdir:/ro:ro -v /hostdir/f:/file --rootfs /rootfs -- sh -c '
		for f in /rw/f /ro/f /file; do { echo pwned >>$f; } 2>/dev/null && echo "ESCAPE write $f"; done
		touch /rw/new 2>/dev/null && echo ESCAPE create
		chmod 0777 /rw/f 2>/dev/null && echo ESCAPE chmod
		rm -f /rw/f 2>/dev/null; [ -e /rw/f ] || echo ESCAPE unlink
		echo done'
	assert_status 0
	refute_line_re '^ESCAPE'
	has_line done
	[ "$(cat "$CHROOT/hostdir/f")" = original ]
	[ "$(stat -c '%u:%g %a' "$CHROOT/hostdir/f")" = "0:0 644" ]
	[ ! -e "$CHROOT/hostdir/new" ]
}

@test "nouserns: setuid planting: a setuid-root binary reached through a bind runs as 65534, and what the box plants is setuid-nobody at worst" {
	chroot_mount_cgroups
	mkdir -m 0755 "$CHROOT/suid"
	cp /bin/busybox "$CHROOT/suid/busybox"
	chown 0:0 "$CHROOT/suid/busybox"
	chmod 4755 "$CHROOT/suid/busybox"
	run --separate-stderr chroot_run /kern box t -q -v /suid:/s:ro -v /plant:/p --rootfs /rootfs -- sh -c \
		'/s/busybox id -u; /s/busybox setpriv --reuid=0 true 2>/dev/null && echo ESCAPE setpriv; busybox cp /bin/busybox /p/busybox && chmod 4755 /p/busybox && echo planted; busybox chown 0 /p/busybox 2>/dev/null && echo ESCAPE chown; exit 0'
	assert_status 0
	[ "${lines[0]}" = 65534 ]
	refute_line_re '^ESCAPE'
	has_line planted
	# What was planted is the workload's, never root's.
	[ "$(stat -c '%u:%g %a' "$CHROOT/plant/busybox")" = "65534:65534 4755" ]
	# Run from a second box, it gives nothing either (no_new_privs, nosuid).
	chmod 0755 "$CHROOT/plant"
	run --separate-stderr chroot_run /kern box t2 -q --user 1000:1000 -v /plant:/p --rootfs /rootfs -- /p/busybox id -u
	assert_status 0
	[ "$output" = 1000 ]
}

@test "nouserns: a missing -v source is created owned by the workload uid, and what it writes there is owned by that uid on the host" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t -q -v /made/by/kern:/out --rootfs /rootfs -- sh -c 'echo hi >/out/f && mkdir /out/d'
	assert_status 0
	[ "$(stat -c '%u:%g %a' "$CHROOT/made/by/kern")" = "65534:65534 700" ]
	[ "$(stat -c '%u:%g' "$CHROOT/made/by/kern/f")" = 65534:65534 ]
	[ "$(stat -c '%u:%g' "$CHROOT/made/by/kern/d")" = 65534:65534 ]
	[ "$(cat "$CHROOT/made/by/kern/f")" = hi ]
	run --separate-stderr chroot_run /kern box t -q --user 1000:1000 -v /made/for/app:/out --rootfs /rootfs -- touch /out/x
	assert_status 0
	[ "$(stat -c '%u:%g' "$CHROOT/made/for/app/x")" = 1000:1000 ]
}

@test "nouserns: cgroup caps hold: --memory 32m and 200 MiB end 137 with the OOM sentence; --pids-limit caps forks" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t -q --memory 32m --rootfs /rootfs -- dd if=/dev/zero of=/dev/shm/fill bs=1M count=200
	assert_status 137
	[[ $stderr == *"kern: the workload was killed by the kernel's OOM killer against this box's own memory cap."* ]]
	# 12 background sleeps under a cap of 8 tasks: busybox sh gives up
	# (exit 2) at the first fork the cap refuses.
	run --separate-stderr chroot_run /kern box t -q --pids-limit 8 --rootfs /rootfs -- sh -c \
		'i=0; while [ $i -lt 12 ]; do sleep 5 & i=$((i + 1)); done; echo all-started'
	assert_status 2
	[ -z "$output" ]
	[[ $stderr == *"can't fork: Resource temporarily unavailable"* ]]
}

@test "nouserns: SIGKILL of the supervisor leaves no process, no mount, and (after the next start's sweep) no box cgroup" {
	local sup
	detached gone
	[ -n "$(chroot_procs)" ]
	kill -KILL "$sup"
	for _ in $(seq 50); do [ -z "$(chroot_procs)" ] && break; sleep 0.1; done
	[ -z "$(chroot_procs)" ] || { echo "left: $(chroot_procs)"; return 1; }
	run grep -c "kern-0/scratch" /proc/self/mountinfo
	[ "$output" = 0 ]
	# The processes can be gone from /proc while a v1 box cgroup is still
	# populated (dying tasks, one level down: cgroup/tree.c): wait for
	# every cgroup.procs of the box's trees to empty, or the next box's
	# sweep meets a box still dying (rmdir: EBUSY) and rightly leaves it.
	local x
	for _ in $(seq 500); do
		x=$(find "$CHROOT/sys/fs/cgroup" -maxdepth 6 -type d -name "kern-box-gone-$sup" \
			-exec find {} -name cgroup.procs -exec cat {} + \; 2>/dev/null | head -1)
		[ -z "$x" ] && break
		sleep 0.01
	done
	[ -z "$x" ] || { echo "box cgroups still populated: $x"; return 1; }
	# The sweep takes the cgroups of dead supervisors: a killed one is a
	# zombie until its parent reaps it (here the host's init, which a
	# detached supervisor was handed to, and which reaps when it will).
	for _ in $(seq 200); do kill -0 "$sup" 2>/dev/null || break; sleep 0.05; done
	! kill -0 "$sup" 2>/dev/null || { echo "the killed supervisor $sup was not reaped in 10 s"; return 1; }
	run chroot_run /kern box next -q --rootfs /rootfs -- true
	assert_status 0
	run find "$CHROOT/sys/fs/cgroup" -maxdepth 6 -type d -name "kern-box-gone-$sup"
	[ -z "$output" ] || { echo "box cgroups left: $output"; return 1; }
}

@test "nouserns: kern exec into a box without a user namespace: root only; the record's uid, no capability, no_new_privs, seccomp; -u 0 refused" {
	local sup
	detached ex
	grep -qx $'userns\tno' "$CHROOT/tmp/kern-0/instances/ex"
	# kern ps --json tells clients that the box's ids are the host's.
	run --separate-stderr chroot_run /kern ps --json --filter name=ex
	assert_status 0
	[[ $output == *'"name": "ex"'*'"userns": false}'* ]] || { echo "ps: $output"; return 1; }
	run --separate-stderr chroot_run /kern exec ex -- sh -c "$IDENT"
	assert_status 0
	[ "$output" = "$IDENT_NOBODY" ] || { diff <(echo "$IDENT_NOBODY") <(echo "$output"); return 1; }
	# The command's / is the box's, not the mount namespace's root (the
	# tree outside the chroot, which setns(2) alone would have given it).
	run --separate-stderr chroot_run /kern box ls -q --rootfs /rootfs -- ls -a /
	assert_status 0
	local box_root=$output
	run --separate-stderr chroot_run /kern exec ex -- ls -a /
	assert_status 0
	[ "$output" = "$box_root" ] || { diff <(echo "$box_root") <(echo "$output"); return 1; }
	run --separate-stderr chroot_run /kern exec ex -u 0 -- id -u
	assert_status 126
	[ -z "$output" ]
	[[ $stderr == "kern: exec: host uid 0 gid 0 without a user namespace needs --workload-is-host-root - refusing to run" ]] ||
		{ echo "stderr: $stderr"; return 1; }
	# A user does not even find root's box.
	run --separate-stderr chroot_run_as 65534:65534 /kern exec ex -- id -u
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	kill -TERM "$sup"
	for _ in $(seq 50); do [ -z "$(chroot_procs)" ] && break; sleep 0.1; done
}

@test "nouserns: --plan prints the chain of this mode (kern-ns --no-userns, kern-wait --no-userns, the workload's ids) and the chain runs" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern box t --rootfs /rootfs --plan -- id -u
	assert_status 0
	has_line '# no user namespace: the workload runs as uid 65534:65534 with no capabilities'
	assert_line_re '^  kern-ns --no-userns -- \\$'
	assert_line_re '^  kern-wait .*--user 65534:65534 .*--no-userns -- \\$'
	assert_line_re '^  kern-seccomp --caps 0000000000000000 .*--user 65534:65534 '
	echo "$output" >"$CHROOT/plan.sh"
	ln -s kern "$CHROOT/kern-cg"
	for a in ns wait fs seccomp; do ln -s kern "$CHROOT/kern-$a"; done
	run --separate-stderr env -i PATH=/:/bin HOME=/root "$CHROOT_BIN" "$CHROOT" sh /plan.sh
	assert_status 0
	[ "$output" = 65534 ] || { echo "stderr: $stderr"; return 1; }
	# kern-wait --no-userns without kern-ns --no-userns before it would
	# run PID 1 in the host's namespaces: refused.
	run --separate-stderr chroot_run /kern wait --name w --runtime /tmp/kern-0 --no-userns -- /bin/true
	assert_status 125
	[[ $stderr == *"kern-wait: --no-userns needs root and kern-ns --no-userns before it"* ]]
}

@test "nouserns: OpenWrt-class: a kern load'ed image boxes in the busybox-only chroot (no glibc, newuidmap or /run/user)" {
	chroot_mount_cgroups
	local fx
	fx=$(fixture_busybox) || skip "no busybox image fixture (python3 and busybox-static build it)"
	[ ! -e "$CHROOT/usr/bin/newuidmap" ]
	[ ! -e "$CHROOT/run/user" ]
	[ ! -e "$CHROOT/lib/x86_64-linux-gnu" ]
	cp -r "$fx/busybox" "$CHROOT/img"
	run --separate-stderr chroot_run /kern load -i /img --tag local/bb:1
	assert_status 0
	run --separate-stderr chroot_run /kern box t -q --image local/bb:1 --pull never -- sh -c "$IDENT"
	assert_status 0
	[ "$output" = "$IDENT_NOBODY" ] || { diff <(echo "$IDENT_NOBODY") <(echo "$output"); echo "$stderr"; return 1; }
	run --separate-stderr chroot_run /kern box t --userns=yes --image local/bb:1 --pull never -- true
	assert_status 125
}

@test "nouserns: --userns=no on this host, outside any chroot: the same identity, and a root-owned host file stays unwritten" {
	local r
	r=$(mkrootfs "$BATS_TEST_TMPDIR/rootfs")
	echo original >"$BATS_TEST_TMPDIR/hf"
	run --separate-stderr "$KERN" box t --userns=no --rootfs "$r" -v "$BATS_TEST_TMPDIR/hf:/hf" -- sh -c "$IDENT; { echo x >>/hf; } 2>/dev/null && echo ESCAPE; exit 0"
	assert_status 0
	[ "$output" = "$IDENT_NOBODY" ] || { diff <(echo "$IDENT_NOBODY") <(echo "$output"); return 1; }
	[ -z "$stderr" ]
	[ "$(cat "$BATS_TEST_TMPDIR/hf")" = original ]
	# auto on this host keeps the user namespace.
	run --separate-stderr "$KERN" box t --rootfs "$r" -- id -u
	assert_status 0
	[ "$output" = 0 ]
	[ -z "$stderr" ]
}

@test "nouserns: --userns=no outside the chroot: the --plan chain and the box agree (compare_plan)" {
	use_static_chain
	local r
	r=$(mkrootfs "$BATS_TEST_TMPDIR/rootfs")
	compare_plan p --userns=no --rootfs "$r"
}
