#!/usr/bin/env bats
# kern-oci under a real engine: Debian's podman (test-only packages:
# podman, runc; not in install.sh), as root, with private --root,
# --runroot and --tmpdir under this file's temporary directory, cgroupfs
# and file events (no systemd here), rlimits within root's hard limits
# (root here lacks CAP_SYS_RESOURCE), and the busybox fixture from a
# loopback registry. Run by `make check-oci`, not by make check.
#
# Every field of the config podman writes is mapped: containers run on
# kern (stdout, exit status, --memory with its OOM kill, exec, stop), and
# nothing is left after them: no container, box, kern-oci state or
# cgroup at the config's cgroupsPath.
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
	# The cgroup parents podman's cgroupsPath made (runc's and kern-oci's
	# runs alike), when empty.
	local d
	for d in /sys/fs/cgroup/*/libpod_parent/conmon /sys/fs/cgroup/*/libpod_parent /sys/fs/cgroup/libpod_parent; do
		[ ! -d "$d" ] || rmdir "$d" 2>/dev/null || true
	done
	registry_stop
}

setup() {
	need
	[ -n "${REG_PORT:-}" ] || skip "the busybox fixture or the loopback registry could not be set up"
	IMG=127.0.0.1:$REG_PORT/oci/busybox:1
	KO=$TREE/build/bin/kern-oci
	OCIROOT=$BATS_TEST_TMPDIR/kern-oci-root
}

# podman on this file's private storage, as this machine allows it, run
# from that directory: conmon drops an "oom" file into its working
# directory when it sees an OOM kill.
P() {
	(cd "$PR" && podman --root "$PR/root" --runroot "$PR/runroot" --tmpdir "$PR/tmp" \
		--cgroup-manager cgroupfs --events-backend file "$@")
}
ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
RUNFLAGS=(--rm "${ULIMITS[@]}")

@test "podman --runtime runc run --rm works on this machine (the comparison)" {
	run P --runtime "$(command -v runc)" run "${RUNFLAGS[@]}" "$IMG" echo hi
	assert_status 0
	[ "$output" = hi ]
}

# gone ID: nothing of podman's container ID is left.
gone() {
	[ -z "$(P ps -a -q --filter "id=$1")" ] || { echo "container $1 left"; return 1; }
	[ ! -e "/run/kern-oci/$1" ] || { echo "kern-oci state of $1 left"; return 1; }
	! "$KERN" ps 2>/dev/null | grep -q "oci.bundle=$PR" || { echo "a box of this podman is left"; return 1; }
	! ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$1" /sys/fs/cgroup/libpod_parent/libpod-"$1" 2>/dev/null |
		grep -q . || { echo "cgroup of $1 left"; return 1; }
}

# The id podman gives the container named $1.
cid() { P inspect --format '{{.Id}}' "$1"; }

@test "podman --runtime kern-oci run --rm: the container's stdout and exit status; nothing left" {
	run --separate-stderr P --runtime "$KO" run "${RUNFLAGS[@]}" --name pk1 "$IMG" echo hi
	assert_status 0
	[ "$output" = hi ] || { echo "$stderr"; false; }
	run P --runtime "$KO" run "${RUNFLAGS[@]}" "$IMG" sh -c 'echo out; exit 7'
	assert_status 7
	[ "$output" = out ]
	[ -z "$(P ps -a -q)" ]
	! "$KERN" ps 2>/dev/null | grep -q "oci.bundle=$PR"
}

@test "podman --memory: the limit is the box cgroup's at the config's cgroupsPath; the OOM kill is 137 and kern's OOM line" {
	P --runtime "$KO" run -d "${ULIMITS[@]}" --memory 64m --name pk2 "$IMG" sleep 60 >/dev/null
	local id f
	id=$(cid pk2)
	f=/sys/fs/cgroup/memory/libpod_parent/libpod-$id/memory.limit_in_bytes
	[ -e "$f" ] || f=/sys/fs/cgroup/libpod_parent/libpod-$id/memory.max
	[ "$(cat "$f")" = 67108864 ]
	P --runtime "$KO" rm -f pk2 >/dev/null
	gone "$id"
	run --separate-stderr P --runtime "$KO" run "${RUNFLAGS[@]}" --memory 32m "$IMG" \
		sh -c 'x=$(head -c 100000000 /dev/zero | tr "\0" x); echo survived'
	assert_status 137
	[ -z "$output" ]
	grep -q "killed by the kernel's OOM killer against this box's own memory cap" <<<"$stderr"
	# podman's own OOMKilled flag stays false here with runc too (podman
	# 4.3's conmon on this machine's hybrid cgroups): containerd's OOM
	# event is tested in containerd.bats.
}

@test "podman exec into a kern-oci container, then podman stop: SIGTERM ends it (143), rm leaves nothing" {
	P --runtime "$KO" run -d "${ULIMITS[@]}" --name pk3 "$IMG" sleep 60 >/dev/null
	local id
	id=$(cid pk3)
	run P --runtime "$KO" exec pk3 sh -c 'echo in-exec; id -u; hostname'
	assert_status 0
	[ "${lines[0]}" = in-exec ]
	[ "${lines[1]}" = 0 ]
	# The container's own UTS namespace, with podman's hostname (its id's prefix).
	[ "${lines[2]}" = "${id:0:12}" ]
	run P --runtime "$KO" stop -t 5 pk3
	assert_status 0
	[ "$(P inspect --format '{{.State.ExitCode}}' pk3)" = 143 ]
	P --runtime "$KO" rm pk3 >/dev/null
	gone "$id"
}

@test "the config podman writes holds no field kern-oci refuses; nor does runc spec's" {
	run P --runtime "$(capture_runtime "$BATS_TEST_TMPDIR/podman.json")" run "${RUNFLAGS[@]}" "$IMG" true
	assert_status 0
	# The fields that were refused before kern-oci mapped them are there.
	jq -e '.linux.cgroupsPath and .linux.seccomp and (.linux.namespaces[] | select(.type == "network") | .path)' \
		"$BATS_TEST_TMPDIR/podman.json" >/dev/null
	ROOTFS=$(mkrootfs)
	# The files podman binds are gone with its container: stand-ins.
	jq -r '.mounts[] | select(.type == "bind") | .source' "$BATS_TEST_TMPDIR/podman.json" | while read -r s; do
		mkdir -p "$(dirname "$s")"
		case $s in */shm) mkdir -p "$s" ;; *) touch "$s" ;; esac
	done
	# Its network namespace is gone too: this file's own stands in.
	local ns=kern-oci-pd$$
	ip netns add "$ns"
	jq --arg p "/run/netns/$ns" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)' \
		"$BATS_TEST_TMPDIR/podman.json" >"$BATS_TEST_TMPDIR/podman2.json"
	run refused_fields "$BATS_TEST_TMPDIR/podman2.json" "$ROOTFS"
	ip netns del "$ns"
	jq -r '.mounts[] | select(.type == "bind") | .source' "$BATS_TEST_TMPDIR/podman.json" | xargs -r rm -rf
	assert_status 0
	[ "${#lines[@]}" -eq 0 ] || { printf '# %s\n' "${lines[@]}" >&3; false; }
	command -v runc >/dev/null || skip "runc is not installed"
	(cd "$BATS_TEST_TMPDIR" && runc spec)
	run refused_fields "$BATS_TEST_TMPDIR/config.json" "$ROOTFS"
	assert_status 0
	[ "${#lines[@]}" -eq 0 ] || { printf '# %s\n' "${lines[@]}" >&3; false; }
}

@test "rootless podman (the test user; --network none, since slirp4netns cannot open /dev/net/tun here) runs on kern-oci: stdout, exit status, exec, stop; nothing left" {
	local user d fx
	user=$("$TREE/tests/helpers/test-user") || skip "the test user could not be created"
	fx=$(fixture_busybox) || skip "the busybox fixture could not be built"
	# What the user needs, readable by it: kern (kern-oci), the image.
	d=/tmp/kern-oci-rootless-$$
	rm -rf "$d"
	mkdir "$d"
	echo "$d" >"$BATS_TEST_TMPDIR/rootless-dir"
	chmod 755 "$d"
	cp "$TREE/build/kern" "$d/kern"
	ln -s kern "$d/kern-oci"
	cp -a "$fx/busybox" "$d/bb"
	chmod -R a+rX "$d"
	mkdir -m 700 "$d/u" && chown "$user:" "$d/u"
	RP() {
		runuser -u "$user" -- env -i HOME="/home/$user" USER="$user" PATH=/usr/local/bin:/usr/bin:/bin \
			XDG_RUNTIME_DIR="$d/u" podman --root "$d/u/root" --runroot "$d/u/runroot" --tmpdir "$d/u/tmp" \
			--cgroup-manager cgroupfs --events-backend file "$@" 2> >(grep -v 'is not a shared mount' >&2)
	}
	RP pull -q "oci:$d/bb" >/dev/null
	local img=localhost$d/bb rf=(--network none "${ULIMITS[@]}")
	run RP --runtime "$d/kern-oci" run --rm "${rf[@]}" "$img" sh -c 'id -u; cat /proc/self/uid_map; exit 5'
	assert_status 5
	[ "${lines[0]}" = 0 ]
	# Box root is the user's podman root, which is the user on the host.
	[[ ${lines[1]} =~ ^\ *0\ +0\ +1$ ]]
	RP --runtime "$d/kern-oci" run -d --name rl1 "${rf[@]}" "$img" sleep 60 >/dev/null
	run RP --runtime "$d/kern-oci" exec rl1 sh -c 'echo in-exec'
	assert_status 0
	[ "$output" = in-exec ]
	RP --runtime "$d/kern-oci" stop -t 5 rl1 >/dev/null
	[ "$(RP inspect --format '{{.State.ExitCode}}' rl1)" = 143 ]
	RP --runtime "$d/kern-oci" rm rl1 >/dev/null
	[ -z "$(RP ps -a -q)" ]
	[ -z "$(ls -A "$d/u/kern-oci")" ]
	run runuser -u "$user" -- env -i HOME="/home/$user" XDG_RUNTIME_DIR="$d/u" "$d/kern" ps -q
	[ -z "$output" ]
}

teardown() {
	local d
	[ -s "$BATS_TEST_TMPDIR/rootless-dir" ] || return 0
	d=$(cat "$BATS_TEST_TMPDIR/rootless-dir")
	runuser -u kerntest -- env -i HOME=/home/kerntest XDG_RUNTIME_DIR="$d/u" PATH=/usr/bin:/bin \
		podman --root "$d/u/root" --runroot "$d/u/runroot" --tmpdir "$d/u/tmp" system reset --force \
		>/dev/null 2>&1 || true
	rm -rf "$d"
}
