#!/usr/bin/env bats
# kern-oci under a real engine: Debian's podman (test-only packages:
# podman, runc; not in install.sh), as root, with private --root,
# --runroot and --tmpdir under this file's temporary directory, cgroupfs
# and file events (no systemd here), rlimits within root's hard limits
# (root here lacks CAP_SYS_RESOURCE), and the busybox fixture from a
# loopback registry. Run by `make check-oci`, not by make check.
#
# What podman writes today still holds fields kern-oci does not map, so
# the run is refused at create; these tests hold that refusal to its
# promise (one line naming the field, reaching podman's user, nothing
# left behind) and keep the list of refused fields current, so that each
# field mapped later shows here as a list one shorter.
load ../bats/helper
load ../helpers/fixtures
load oci_helper

need() {
	is_root || skip "needs root (podman's rootful engine; this run is as $(id -un))"
	local c
	for c in podman runc docker-registry skopeo jq; do
		command -v "$c" >/dev/null || skip "$c is not installed (apt-get install podman runc docker-registry skopeo jq)"
	done
}

setup_file() {
	is_root && command -v podman >/dev/null && command -v docker-registry >/dev/null &&
		command -v skopeo >/dev/null || return 0
	local fx
	fx=$(fixture_busybox) || return 0
	registry_start "$BATS_FILE_TMPDIR/reg"
	registry_push "$fx/busybox" "oci/busybox:1" v2s2
	export REG_PORT REG_PID
	export PR=$BATS_FILE_TMPDIR/podman
	mkdir -p "$PR"
	P pull -q --tls-verify=false "127.0.0.1:$REG_PORT/oci/busybox:1" >/dev/null
}

teardown_file() {
	if [ -n "${PR:-}" ] && [ -d "$PR/root" ]; then
		P rm -a -f >/dev/null 2>&1 || true
		# Only the private storage this file made.
		P system reset --force >/dev/null 2>&1 || true
		rm -rf "$PR"
	fi
	registry_stop
}

setup() {
	need
	[ -n "${REG_PORT:-}" ] || skip "the busybox fixture or the loopback registry could not be set up"
	IMG=127.0.0.1:$REG_PORT/oci/busybox:1
	KO=$TREE/build/bin/kern-oci
	OCIROOT=$BATS_TEST_TMPDIR/kern-oci-root
}

# podman on this file's private storage, as this machine allows it.
P() {
	podman --root "$PR/root" --runroot "$PR/runroot" --tmpdir "$PR/tmp" \
		--cgroup-manager cgroupfs --events-backend file "$@"
}
RUNFLAGS=(--rm --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

@test "podman --runtime runc run --rm works on this machine (the comparison)" {
	run P --runtime "$(command -v runc)" run "${RUNFLAGS[@]}" "$IMG" echo hi
	assert_status 0
	[ "$output" = hi ]
}

@test "podman --runtime kern-oci run --rm: kern-oci's one line naming the first field it does not map reaches podman's user; nothing left" {
	run --separate-stderr P --runtime "$KO" run "${RUNFLAGS[@]}" "$IMG" echo hi
	assert_status 126
	[ -z "$output" ]
	grep -q "kern-oci: error: oci: create: config.json: linux.cgroupsPath is not supported" <<<"$stderr" ||
		{ echo "$stderr"; false; }
	# podman removed its container; kern-oci made no box or cgroup.
	[ -z "$(P ps -a -q)" ]
	! "$KERN" ps 2>/dev/null | grep -q "oci.bundle=$PR"
	! find /sys/fs/cgroup -maxdepth 3 -name "kern-box-*" -newer "$BATS_TEST_TMPDIR" 2>/dev/null | grep -q .
}

@test "the fields kern-oci refuses in the config podman writes, in the order create meets them" {
	run P --runtime "$(capture_runtime "$BATS_TEST_TMPDIR/podman.json")" run "${RUNFLAGS[@]}" "$IMG" true
	assert_status 0
	ROOTFS=$(mkrootfs)
	# The files podman binds are gone with its container: stand-ins.
	jq -r '.mounts[] | select(.type == "bind") | .source' "$BATS_TEST_TMPDIR/podman.json" | while read -r s; do
		mkdir -p "$(dirname "$s")"
		case $s in */shm) mkdir -p "$s" ;; *) touch "$s" ;; esac
	done
	run refused_fields "$BATS_TEST_TMPDIR/podman.json" "$ROOTFS"
	jq -r '.mounts[] | select(.type == "bind") | .source' "$BATS_TEST_TMPDIR/podman.json" | xargs -r rm -rf
	assert_status 0
	printf '# %s\n' "${lines[@]}" >&3
	[ "${lines[0]}" = linux.cgroupsPath ]
	[ "${lines[1]}" = "linux.namespaces[1].path" ]
	[ "${lines[2]}" = linux.seccomp ]
	[[ ${lines[3]} == "mounts[2] sysfs /sys "* ]]
	[ "${#lines[@]}" -eq 4 ]
}

@test "the fields kern-oci refuses in runc spec's config: only the sysfs mount" {
	command -v runc >/dev/null || skip "runc is not installed"
	(cd "$BATS_TEST_TMPDIR" && runc spec)
	ROOTFS=$(mkrootfs)
	run refused_fields "$BATS_TEST_TMPDIR/config.json" "$ROOTFS"
	assert_status 0
	printf '# %s\n' "${lines[@]}" >&3
	[[ ${lines[0]} == "mounts[5] sysfs /sys "* ]]
	[ "${#lines[@]}" -eq 1 ]
}
