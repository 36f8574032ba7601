#!/usr/bin/env bats
# Hosts where CLONE_NEWUSER is refused (issue 19): the static kern in a
# chroot (tests/bats/chroot.bash), where the kernel refuses it to root as
# well. kern box, kern-ns and kern doctor must name the real cause, the
# chroot, with its fix, not the Debian sysctl. Root only (chroot, mount):
# as another user every test skips, saying so.
load helper
load chroot

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

@test "nouserns: kern box as root in a chroot exits 125 naming the chroot, not the sysctl, with the fix on a hint line" {
	refused_in_chroot 0:0 clone '/ is not the root of its mount namespace' \
		/kern box t --rootfs /rootfs -- /bin/sh -c 'echo ran'
}

@test "nouserns: kern box as an unprivileged user in a chroot names the chroot too (told without setns, from init's root or mountinfo)" {
	refused_in_chroot 65534:65534 clone '/ is not /proc/1/root|no mount is at /' \
		/kern box t --rootfs /rootfs -- /bin/sh -c 'echo ran'
}

@test "nouserns: a box whose clone is refused leaves no record, scratch directory, box cgroup or process, as root and as a user" {
	chroot_mount_cgroups
	local name=leak-$$ ids
	for ids in 0:0 65534:65534; do
		run --separate-stderr chroot_run_as "$ids" /kern box "$name" --rootfs /rootfs -- /bin/true
		assert_status 125
		chroot_no_leftovers "${ids%%:*}"
		run find "$CHROOT/sys/fs/cgroup" -maxdepth 6 -type d -name "kern-box-$name-*"
		[ -z "$output" ] || { echo "box cgroups left (as $ids):"; echo "$output"; return 1; }
	done
}

@test "nouserns: kern box -d in a chroot: the launcher prints the cause and its hint, exits 125, and nothing is left" {
	refused_in_chroot 0:0 clone '/ is not the root of its mount namespace' \
		/kern box dt -d --rootfs /rootfs -- /bin/sleep 60
	chroot_no_leftovers 0
}

@test "nouserns: kern-ns, the chain's namespace step, names the chroot from its unshare" {
	# (root's kern-ns makes the namespaces itself only with --map-host-root;
	# otherwise kern-wait, next in the chain, clones into them: box -d above)
	refused_in_chroot 0:0 unshare '/ is not the root of its mount namespace' \
		/kern ns --map-host-root -- /bin/sh -c 'echo ran'
}

@test "nouserns: kern doctor in a chroot names the chroot in its user-namespace row, with the fix, and exits 2" {
	run --separate-stderr chroot_run /kern doctor
	assert_status 2
	assert_line_re '^  user namespaces +NO +unshare\(CLONE_NEWUSER\): Operation not permitted: kern runs in a chroot \(/ is not the root of its mount namespace\), and the kernel refuses new user namespaces to any chrooted process, root included; no box can start$'
	assert_line_re '^ {28}fix: run kern outside the chroot, or enter the tree with pivot_root\(2\) in a new mount namespace instead of chroot\(2\)$'
	refute_line_re 'unprivileged_userns_clone'
	assert_line_re '^  overlay in userns +- +needs user namespaces$'
}

@test "nouserns: without /proc in the chroot kern box and kern doctor say /proc is not mounted, and how to mount it" {
	chroot_umount_proc
	run --separate-stderr chroot_run /kern box t --rootfs /rootfs -- /bin/true
	assert_status 125
	output=$stderr
	assert_line_re '^kern: sandbox setup failed: clone\(CLONE_NEWUSER\|CLONE_NEWPID\|\.\.\.\): Operation not permitted: /proc is not mounted here, so kern cannot tell why \(a chroot without /proc\?\)$'
	assert_line_re '^hint: mount -t proc proc /proc$'
	run --separate-stderr chroot_run /kern doctor
	assert_status 2
	assert_line_re '^  user namespaces +NO +unshare\(CLONE_NEWUSER\): Operation not permitted: /proc is not mounted here'
	assert_line_re '^ +fix: mount -t proc proc /proc$'
}

@test "nouserns: the harness mounts the host's cgroup hierarchies in the chroot, where kern doctor finds memory and pids caps in force" {
	chroot_mount_cgroups
	run --separate-stderr chroot_run /kern doctor
	assert_status 2
	assert_line_re '^  caps as this user +ok +memory pids'
	assert_line_re '^  user namespaces +NO .*kern runs in a chroot'
	# chroot_destroy (teardown) unmounts them all and removes the tree.
	local c=$CHROOT
	chroot_destroy
	run grep -F " $c/" /proc/self/mountinfo
	assert_status 1
	[ ! -e "$c" ]
}
