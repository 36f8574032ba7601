# The no-userns pass (tests/helpers/nouserns-pass): the box suites with
# kern as root in a chroot where the kernel refuses CLONE_NEWUSER, boxing
# with --userns=no, where the workload is uid 65534 with no capabilities.
# The tests that cannot apply in that mode, each with why: kern_private_dirs
# (every box suite's setup) skips them, printing the reason; nothing else is
# left out. One line per test: FILE<TAB>NAME<TAB>REASON, NAME a glob on the
# test's name.
NP_MAPS="reads or sets id maps (uid_map, --uid-range, --map-host-root): without a user namespace there are none, and the mode refuses the flags"
NP_CAPS="expects box root's capability set; here the workload has none (and --cap-add is refused: a kept capability would be a host one)"
NP_ROOTFILES="writes over root-owned files of the box root (/bin, /etc, /, /dev) as box root; the workload here is uid 65534, which cannot: the mode's point"
NP_OWNER="a missing -v source is made for the workload (uid 65534) in this mode, not the caller (kern-box.1, --userns)"
NP_OWNNS="makes mounts in a mount namespace of its own (unshare -m) before kern runs; the chroot, a bind made before, does not see them"
NP_USER="runs kern as an unprivileged user or checks the user path; the mode is root's only, and the chroot needs root"
NP_HOME="HOME is /root, 0700 and root's, for a workload of uid 65534: Python libraries warn (H19b-findings.md)"
NOUSERNS_PASS_SKIPS=$(cat <<LIST
box_cli.bats	CLI-7: *	$NP_MAPS
box_cli.bats	CLI-8: *	$NP_MAPS
box_fs.bats	NS-5: *	$NP_MAPS
box_fs.bats	NS-4: *	$NP_MAPS
box_fs.bats	--user root where the image's /etc/group lists root *	$NP_MAPS
box_fs.bats	MNT-11: *	$NP_ROOTFILES
box_fs.bats	MNT-12: a bind-mount alias *	$NP_OWNNS
box_fs.bats	--image host: Debian's matplotlib *	$NP_HOME
box_fs.bats	--bind-rootfs writes land *	$NP_ROOTFILES
box_fs.bats	a missing -v source is created 0700 *	$NP_OWNER
box_life.bats	IO-2: *	$NP_MAPS
box_life.bats	DL-6: a signal that meets PID 1's end of the idmapped-mount service *	without a user namespace the box root is no subordinate id: the supervisor serves PID 1 no idmapped mounts, so the moment tested does not exist
box_mounts.bats	OT-3: without the new mount API *	$NP_MAPS
box_mounts.bats	OT-9: a missing -v source below a symlink *	$NP_OWNER
box_mounts.bats	OT-9: root creates nothing through a user's *	$NP_USER
box_mounts.bats	OT-10: *	$NP_ROOTFILES
box_mounts.bats	OT-3: :ro binds and --image host's system dirs *	$NP_USER
boxctl.bats	CAP-5: kern exec into a --cap-drop ALL box has CapEff 0 (the recorded set, not the baseline)*	$NP_CAPS
boxctl.bats	exec -u of a uid the box cannot map *	$NP_MAPS
boxctl.bats	exec -u resolves names in the box's own *	$NP_MAPS
caps.bats	CAP-1: *	$NP_CAPS
caps.bats	CAP-3: *	$NP_CAPS
caps.bats	mknod of a device is refused in a box even though CAP_MKNOD is kept *	$NP_CAPS
cgroup.bats	OT-7: 200 MiB into / with --disk 64m *	$NP_ROOTFILES
cgroup.bats	OT-7: where tmpfs cannot hold an overlay upper *	$NP_ROOTFILES
cgroup.bats	OT-7: the layer is charged to the box's memory cap*	$NP_ROOTFILES
cgroup.bats	CG-8: no memory controller on the host*	$NP_OWNNS
cgroup.bats	CG-1 (private cgroup2*	$NP_OWNNS
cgroup.bats	v1 delegation: *	$NP_USER
cgroup.bats	CG-8/CG-9 as an unprivileged uid *	$NP_USER
cgroup.bats	rootless without a delegated cgroup*	$NP_USER
LIST
)

nouserns_pass_skip() {
	local file glob why
	while IFS=$'\t' read -r file glob why; do
		[ -n "$file" ] || continue
		[ "$file" = "${BATS_TEST_FILENAME##*/}" ] || continue
		# shellcheck disable=SC2053
		[[ $BATS_TEST_DESCRIPTION == $glob ]] && skip "no-userns pass: $why"
	done <<<"$NOUSERNS_PASS_SKIPS"
	return 0
}
