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
# Every field of containerd's default spec is mapped: the container runs
# on kern (exit status, stdout, exec, kill, delete, OOM), and nothing is
# left after it: no state under the shim's --root, no box, no cgroup at
# its cgroupsPath, no shim.
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
	# The cgroup parent of containerd's cgroupsPath (/default/ID), when empty.
	local d
	for d in /sys/fs/cgroup/*/default /sys/fs/cgroup/default; do
		[ ! -d "$d" ] || rmdir "$d" 2>/dev/null || true
	done
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

# gone ID: nothing of container ID is left.
gone() {
	[ -z "$(C containers ls -q | grep -x "$1")" ] || { echo "container $1 left"; return 1; }
	[ ! -e "/run/containerd/runc/default/$1" ] || { echo "kern-oci state of $1 left"; return 1; }
	! "$KERN" ps 2>/dev/null | grep -q "^$1 " || { echo "box $1 left"; return 1; }
	! ls -d /sys/fs/cgroup/*/default/"$1" 2>/dev/null | grep -q . || { echo "cgroup of $1 left"; return 1; }
	! pgrep -f "containerd-shim-runc-v2 .*-id $1( |$)" >/dev/null || { echo "shim of $1 left"; return 1; }
}

@test "ctr run --runc-binary kern-oci: the container's stdout and exit status; nothing left" {
	run C run --rm --runc-binary "$KO" "$IMG" ko1 echo hi
	assert_status 0
	[ "$output" = hi ]
	gone ko1
	run C run --rm --runc-binary "$KO" "$IMG" ko2 sh -c 'echo out; exit 3'
	assert_status 3
	[ "$output" = out ]
	gone ko2
}

@test "ctr: a detached container, an exec in it, kill, delete" {
	C run -d --runc-binary "$KO" "$IMG" ko3 sh -c 'sleep 60' >/dev/null
	[ "$(C tasks ls | awk '$1 == "ko3" {print $3}')" = RUNNING ]
	run C tasks exec --exec-id e1 ko3 sh -c 'echo in-exec; id -u; cat /proc/1/cmdline | tr "\0" " "'
	assert_status 0
	[ "${lines[0]}" = in-exec ]
	[ "${lines[1]}" = 0 ]
	C tasks kill ko3
	for _ in $(seq 50); do
		[ "$(C tasks ls | awk '$1 == "ko3" {print $3}')" = STOPPED ] && break
		sleep 0.1
	done
	[ "$(C tasks ls | awk '$1 == "ko3" {print $3}')" = STOPPED ]
	C tasks delete ko3 >/dev/null
	C containers delete ko3
	gone ko3
}

@test "ctr: the container's cgroup is its cgroupsPath with the memory limit; an OOM kill is exit 137 and containerd's OOM event" {
	C run -d --memory-limit 67108864 --runc-binary "$KO" "$IMG" ko4 sleep 60 >/dev/null
	local f=/sys/fs/cgroup/memory/default/ko4/memory.limit_in_bytes
	[ -e "$f" ] || f=/sys/fs/cgroup/default/ko4/memory.max
	[ "$(cat "$f")" = 67108864 ]
	C tasks kill -s SIGKILL ko4
	sleep 0.5
	C tasks delete ko4 >/dev/null
	C containers delete ko4
	gone ko4
	# containerd's own OOM event: the shim watches the memory cgroup of
	# the pid create wrote, which is the box's until start.
	C events >"$BATS_TEST_TMPDIR/events" 2>&1 &
	local ev=$!
	sleep 0.3
	run C run --rm --memory-limit 33554432 --runc-binary "$KO" "$IMG" ko5 \
		sh -c 'x=$(head -c 100000000 /dev/zero | tr "\0" x); echo survived'
	assert_status 137
	! grep -q survived <<<"$output"
	sleep 0.3
	kill "$ev"
	grep -q '/tasks/oom.*"container_id":"ko5"' "$BATS_TEST_TMPDIR/events" ||
		{ echo "no OOM event for ko5:"; cat "$BATS_TEST_TMPDIR/events"; false; }
	gone ko5
}

@test "ctr: once started, the supervisor is outside its box's memory cgroup again" {
	C run -d --memory-limit 67108864 --runc-binary "$KO" "$IMG" ko6 sleep 60 >/dev/null
	local pid
	pid=$(C tasks ls | awk '$1 == "ko6" {print $2}')
	# Started: the supervisor (the task's pid) is back where create ran,
	# and its box's processes are in the box's memory cgroup (or one
	# below it: kern's v1 box keeps them in box/).
	local box=/sys/fs/cgroup/memory/default/ko6
	[ -d "$box" ] || box=/sys/fs/cgroup/default/ko6
	grep -Eq '(:memory:|^0::)/' "/proc/$pid/cgroup"
	! grep -Eq '(:memory:|^0::)/default/ko6$' "/proc/$pid/cgroup"
	[ -n "$(cat "$box/cgroup.procs" "$box"/*/cgroup.procs 2>/dev/null)" ]
	C tasks kill -s SIGKILL ko6
	for _ in $(seq 50); do
		[ "$(C tasks ls | awk '$1 == "ko6" {print $3}')" = STOPPED ] && break
		sleep 0.1
	done
	C tasks delete ko6 >/dev/null
	C containers delete ko6
	gone ko6
}

@test "the config containerd writes (ctr run) holds no field kern-oci refuses" {
	run C run --rm --runc-binary "$(capture_runtime "$BATS_TEST_TMPDIR/ctr.json")" "$IMG" cap1 true
	assert_status 0
	# containerd's additionalGids [0] for root is accepted (the primary gid).
	[ "$(jq -c .process.user.additionalGids "$BATS_TEST_TMPDIR/ctr.json")" = "[0]" ]
	# The fields that were refused before kern-oci mapped them are there.
	[ "$(jq -r .linux.cgroupsPath "$BATS_TEST_TMPDIR/ctr.json")" = /default/cap1 ]
	jq -e '.mounts[] | select(.type == "sysfs")' "$BATS_TEST_TMPDIR/ctr.json" >/dev/null
	ROOTFS=$(mkrootfs)
	run refused_fields "$BATS_TEST_TMPDIR/ctr.json" "$ROOTFS"
	assert_status 0
	[ "${#lines[@]}" -eq 0 ] || { printf '# %s\n' "${lines[@]}" >&3; false; }
}
