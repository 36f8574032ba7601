#!/usr/bin/env bats
# kern-oci under containerd (Debian's containerd 1.6, test-only), the
# path a Kubernetes RuntimeClass takes: containerd-shim-runc-v2 calls
# the runtime binary `ctr run --runc-binary` names, with --log FILE
# --log-format json, and reports the log's last error line. containerd
# runs as root on a private socket, root and state directory (the CRI
# plugin off) and is stopped by its pid; the busybox fixture is imported
# from a file, so nothing but this machine is contacted. Run by
# `make check-oci`, not by make check.
#
# containerd's default spec still holds fields kern-oci does not map, so
# create is refused; these tests hold the refusal to its promise (the
# reason reaches ctr's user through the shim's log, nothing left) and
# keep the list of refused fields current.
load ../bats/helper
load ../helpers/fixtures
load oci_helper

need() {
	is_root || skip "needs root (containerd; this run is as $(id -un))"
	local c
	for c in containerd ctr containerd-shim-runc-v2 runc skopeo jq; do
		command -v "$c" >/dev/null || skip "$c is not installed (apt-get install containerd runc skopeo jq)"
	done
}

setup_file() {
	is_root && command -v containerd >/dev/null && command -v skopeo >/dev/null || return 0
	local fx d=$BATS_FILE_TMPDIR/ctd
	fx=$(fixture_busybox) || return 0
	mkdir -p "$d"
	cat >"$d/config.toml" <<-EOF
	version = 2
	root = "$d/root"
	state = "$d/state"
	disabled_plugins = ["io.containerd.grpc.v1.cri"]
	[grpc]
	  address = "$d/sock"
	[ttrpc]
	  address = "$d/sock.ttrpc"
	EOF
	containerd --config "$d/config.toml" >"$d/log" 2>&1 </dev/null 3>&- &
	export CTD_PID=$! CTD=$d
	for _ in $(seq 100); do
		ctr -a "$d/sock" version >/dev/null 2>&1 && break
		sleep 0.1
	done
	skopeo --insecure-policy copy -q "oci:$fx/busybox" "docker-archive:$d/bb.tar:kern.test/busybox:1" >&2
	ctr -a "$d/sock" images import "$d/bb.tar" >/dev/null
}

teardown_file() {
	[ -n "${CTD:-}" ] || return 0
	local c
	for c in $(C containers ls -q 2>/dev/null); do
		C tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
		C tasks delete -f "$c" >/dev/null 2>&1 || true
		C containers delete "$c" >/dev/null 2>&1 || true
	done
	C images rm kern.test/busybox:1 >/dev/null 2>&1 || true
	kill "$CTD_PID" 2>/dev/null || true
	wait "$CTD_PID" 2>/dev/null || true
	umount -R "$CTD/state" "$CTD/root" 2>/dev/null || true
	rm -rf "$CTD"
}

setup() {
	need
	[ -n "${CTD:-}" ] && C version >/dev/null 2>&1 || skip "containerd or the busybox fixture could not be set up"
	KO=$TREE/build/bin/kern-oci
	OCIROOT=$BATS_TEST_TMPDIR/kern-oci-root
	IMG=kern.test/busybox:1
}

C() { ctr -a "$CTD/sock" "$@"; }

@test "ctr run --runc-binary runc works on this machine (the comparison)" {
	run C run --rm --runc-binary "$(command -v runc)" "$IMG" cmp1 echo hi
	assert_status 0
	[ "$output" = hi ]
}

@test "ctr run --runc-binary kern-oci: kern-oci's line, through the shim's --log, names the field it does not map; nothing left" {
	run C run --rm --runc-binary "$KO" "$IMG" ko1 echo hi
	assert_status 1
	grep -q "OCI runtime create failed: create: config.json: linux.cgroupsPath is not supported" <<<"$output" ||
		{ echo "$output"; false; }
	[ -z "$(C containers ls -q)" ]
	[ -z "$(C tasks ls -q)" ]
	! "$KERN" ps 2>/dev/null | grep -q "ko1"
	! pgrep -f "containerd-shim-runc-v2 .*-id ko1" >/dev/null
}

@test "the fields kern-oci refuses in the config containerd writes (ctr run), in the order create meets them" {
	run C run --rm --runc-binary "$(capture_runtime "$BATS_TEST_TMPDIR/ctr.json")" "$IMG" cap1 true
	assert_status 0
	# containerd's additionalGids [0] for root is accepted (the primary gid).
	[ "$(jq -c .process.user.additionalGids "$BATS_TEST_TMPDIR/ctr.json")" = "[0]" ]
	ROOTFS=$(mkrootfs)
	run refused_fields "$BATS_TEST_TMPDIR/ctr.json" "$ROOTFS"
	assert_status 0
	printf '# %s\n' "${lines[@]}" >&3
	[ "${lines[0]}" = linux.cgroupsPath ]
	# A weight kern does not set: without a cpu cap a box has no cpu
	# cgroup of its own, and its weight is its caller's.
	[ "${lines[1]}" = linux.resources.cpu.shares ]
	[[ ${lines[2]} == "mounts["*"] sysfs /sys "* ]]
	# kern's tmpfs mounts are mode 1777 and relatime.
	[[ ${lines[3]} == "mounts["*"] tmpfs /run "*strictatime*mode=755* ]]
	[ "${#lines[@]}" -eq 4 ]
}
