#!/usr/bin/env bats
# Regression tests from real breaks (issue 15): each test replays, on real
# boxes, a published break of a comparable sandbox or a kernel bug
# reachable from a user namespace, and would fail had kern the same flaw.
# Test names carry the CVE id. Bullets an existing suite already covers
# are mapped here instead of tested twice:
#
#   CVE-2024-21626 (runc, leaked fds): the fd half is FD-1/FD-2
#     (box_life.bats "FD-1/FD-2: the box sees only 0 1 2 ...", boxctl.bats
#     "FD-1 via exec ...", egress.bats "FD-1: the egress box ..."); the
#     cwd half (--workdir, kern exec -w) is tested below.
#   CVE-2017-5226 (bubblewrap, TIOCSTI): OT-1 (terminal.bats, C1's) pushes
#     a character into a pty and checks nothing arrives.
#   CVE-2021-30465 (runc, bind target through a swapped symlink): MNT-7,
#     MNT-8 (box_fs.bats) and OT-9 (box_mounts.bats) for -v sources and
#     targets; the rest of setup (/dev, /proc, tmpfs, workdir) is below.
#   GKE gVisor metadata finding: EG-7 (egress.bats, names resolving to
#     private, metadata, mapped addresses) and EG-3 (IP literals in every
#     spelling); what those leave out is below.
load helper

setup() { kern_private_dirs; }

# A host directory holding a canary name the box must never list.
host_canary() {
	canary=$BATS_TEST_TMPDIR/host-dir
	mkdir -p "$canary"
	touch "$canary/h1-canary-host-file"
}

# ---- CVE-2024-21626: a working directory outside the root ----

@test "CVE-2024-21626: kern exec -w /proc/self/fd/N (a host directory kern exec inherited) is refused [rootless]" {
	host_canary
	name=cve21626x-$$
	"$KERN" box "$name" -d --image host -q -- sleep 30
	# fd 7 is a host directory the caller passed down; /proc/self/fd/7 in
	# the command's process would be that directory, outside the box.
	run -127 --separate-stderr "$KERN" exec -w /proc/self/fd/7 "$name" -- sh -c 'pwd; ls' 7<"$canary"
	out1=$output err1=$stderr st1=$status
	# the same through a symlink the box planted in its own /tmp
	"$KERN" exec "$name" -- ln -s /proc/self/fd/7 /tmp/wd
	run -127 --separate-stderr "$KERN" exec -w /tmp/wd "$name" -- sh -c 'pwd; ls' 7<"$canary"
	# a plain symlink inside the box still works as a workdir
	"$KERN" exec "$name" -- sh -c 'mkdir -p /tmp/real && ln -s /tmp/real /tmp/ok'
	run2=$("$KERN" exec -w /tmp/ok "$name" -- pwd)
	"$KERN" stop "$name" >/dev/null 2>&1 || true
	for o in "$out1" "$output"; do
		[[ $o != *h1-canary-host-file* ]] || { echo "the command listed the host directory: $o"; return 1; }
	done
	[ "$st1" = 127 ] && [ "$status" = 127 ] || { echo "status $st1 / $status: $err1 / $stderr"; return 1; }
	[[ $err1 == "kern: cannot start 'sh' in box: "* ]]
	[[ $stderr == "kern: cannot start 'sh' in box: "* ]]
	[ "$run2" = /tmp/real ]
}

@test "CVE-2024-21626: --workdir through /proc/self/fd/N or a rootfs symlink to the host is refused with 125 [rootless]" {
	host_canary
	run --separate-stderr "$KERN" box cve21626w --image host --workdir /proc/self/fd/7 -- sh -c 'pwd; ls' 7<"$canary"
	assert_status 125
	[[ $output != *h1-canary-host-file* ]]
	[[ $stderr == "kern: sandbox setup failed: workdir /proc/self/fd/7: "* ]]
	r=$(mkrootfs)
	ln -sfn "$canary" "$r/wd"
	ln -sfn /proc/self/fd/7 "$r/wd2"
	for w in /wd /wd2 /wd/x; do
		run --separate-stderr "$KERN" box cve21626r --rootfs "$r" --workdir "$w" -- sh -c 'pwd; ls' 7<"$canary"
		assert_status 125
		[[ $output != *h1-canary-host-file* ]]
		[[ $stderr == "kern: sandbox setup failed: workdir $w: "* ]]
	done
	# nothing was created through the symlink
	[ "$(ls -A "$canary")" = h1-canary-host-file ]
}
