#!/usr/bin/env bats
# kern oci (kern-oci): an OCI bundle of busybox run through runc's verbs,
# as root with the default namespaces; bad bundles refused with one line
# and nothing made. create leaves the supervisor running with this
# shell's descriptors: every create closes bats's fd 3 and writes to
# files, never to a pipe bats waits on.
load helper

setup() {
	kern_private_dirs
	is_root || [[ $BATS_TEST_DESCRIPTION == *"[rootless]"* ]] || skip "a root test"
	command -v jq >/dev/null || skip "jq is not installed"
	R=$BATS_TEST_TMPDIR/oci-root
	B=$BATS_TEST_TMPDIR/bundle
	O=$BATS_TEST_TMPDIR/out
	mkdir -p "$B"
	ROOTFS=$(mkrootfs)
	cfg '.'
}

teardown() {
	[ ! -s "$BATS_TEST_TMPDIR/holder" ] || kill "$(cat "$BATS_TEST_TMPDIR/holder")" 2>/dev/null || true
	[ ! -s "$BATS_TEST_TMPDIR/netns" ] || ip netns del "$(cat "$BATS_TEST_TMPDIR/netns")" 2>/dev/null || true
	local m
	for m in "$BATS_TEST_TMPDIR/ipcns" "$BATS_TEST_TMPDIR/ov/merged" "$BATS_TEST_TMPDIR/pod/ipc" \
		"$BATS_TEST_TMPDIR/pod/uts"; do
		! mountpoint -q "$m" 2>/dev/null || umount "$m"
	done
	local id
	for id in $(ls "$R" 2>/dev/null); do "$KERN" oci --root "$R" delete -f "$id" 2>/dev/null || true; done
	# The parents a linux.cgroupsPath test made.
	if [ -s "$BATS_TEST_TMPDIR/cgtop" ]; then
		for m in /sys/fs/cgroup/*/"$(cat "$BATS_TEST_TMPDIR/cgtop")" /sys/fs/cgroup/"$(cat "$BATS_TEST_TMPDIR/cgtop")"; do
			[ ! -d "$m" ] || rmdir "$m" 2>/dev/null || true
		done
	fi
}

oci() { "$KERN" oci --root "$R" "$@"; }

# cfg JQ-FILTER [ARGS-JSON]: config.json = the base config through the filter.
cfg() {
	jq -n --arg root "$ROOTFS" --argjson args "${2:-[\"sh\", \"-c\", \"echo started; sleep 30\"]}" '{
		ociVersion: "1.0.2",
		root: {path: $root, readonly: false},
		process: {terminal: false, user: {uid: 0, gid: 0}, args: $args,
			  env: ["PATH=/bin", "GREETING=hi"], cwd: "/",
			  capabilities: {bounding: ["CAP_KILL", "CAP_AUDIT_WRITE", "CAP_NET_BIND_SERVICE"],
					 effective: ["CAP_KILL"], permitted: ["CAP_KILL"]},
			  rlimits: [{type: "RLIMIT_NOFILE", hard: 1024, soft: 1024}],
			  noNewPrivileges: true},
		hostname: "ocibox",
		mounts: [{destination: "/proc", type: "proc", source: "proc"},
			 {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"]},
			 {destination: "/dev/pts", type: "devpts", source: "devpts"},
			 {destination: "/dev/shm", type: "tmpfs", source: "shm"}],
		linux: {namespaces: [{type: "pid"}, {type: "network"}, {type: "ipc"}, {type: "uts"},
				     {type: "mount"}],
			resources: {memory: {limit: 268435456}, pids: {limit: 64},
				    devices: [{allow: false, access: "rwm"}]},
			maskedPaths: ["/proc/kcore", "/proc/keys", "/sys/firmware"],
			readonlyPaths: ["/proc/sys", "/proc/bus"]},
		annotations: {"org.example.k": "v"}
	}' | jq "$1" >"$B/config.json"
}

state_of() { oci state "$1" | jq -r .status; }

# wait_state ID STATUS: poll up to 5 s.
wait_state() {
	local i
	for i in $(seq 1 100); do
		[ "$(state_of "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	echo "container $1 is $(state_of "$1"), not $2"
	return 1
}

# nothing_left ID: no state, box record, scratch, process or cgroup.
nothing_left() {
	[ ! -e "$R/$1" ] || { echo "state left: $R/$1"; return 1; }
	no_leftovers "$1"
	! find /sys/fs/cgroup -maxdepth 3 -name "kern-box-$1-*" 2>/dev/null | grep -q . ||
		{ echo "cgroup left"; return 1; }
	! pgrep -f "oci-$1-marker" >/dev/null || { echo "process left"; return 1; }
}

# refused ID PATTERN: the last create failed with exit 1, one line
# matching PATTERN, and made nothing.
refused() {
	assert_status 1
	[ "${#lines[@]}" -eq 1 ] || { echo "more than one line:"; echo "$output"; return 1; }
	assert_line_re "$2"
	nothing_left "$1"
}

@test "create, start, state, kill, delete: each state in turn, the pid file, nothing left" {
	cfg '.' '["sh", "-c", "echo started $GREETING $(hostname); sleep 30", "oci-c1-marker"]'
	oci create --bundle "$B" --pid-file "$BATS_TEST_TMPDIR/pid" c1 </dev/null >"$O" 2>&1 3>&-
	[ "$(state_of c1)" = created ]
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	run oci state c1
	[ "$(jq -r .pid <<<"$output")" = "$pid" ]
	[ "$(jq -r .bundle <<<"$output")" = "$B" ]
	[ "$(jq -r '.annotations["org.example.k"]' <<<"$output")" = v ]
	[ "$(jq -r .ociVersion <<<"$output")" = 1.0.2 ]
	kill -0 "$pid"
	# The workload has not run before start.
	sleep 0.2
	! grep -q started "$O" || false
	run oci start c1
	assert_status 0
	[ "$(state_of c1)" = running ]
	wait_for "$O" "^started hi ocibox$" 5
	run oci start c1
	assert_status 1
	assert_line_re "is running, not created"
	"$KERN" ps | grep -q "oci.bundle=$B"
	run oci kill c1 TERM
	assert_status 0
	wait_state c1 stopped
	run oci delete c1
	assert_status 0
	run oci state c1
	assert_status 1
	assert_line_re "container c1 does not exist"
	nothing_left c1
}

@test "run: the container's exit status, stdout through a pipe, then deleted" {
	cfg '.' '["sh", "-c", "echo out; echo err >&2; cat /proc/self/status | grep -c NoNewPrivs; exit 7"]'
	run --separate-stderr oci run -b "$B" r1
	assert_status 7
	[ "${lines[0]}" = out ]
	[ "$stderr" = err ]
	nothing_left r1
	# A signal's death is 128+N.
	cfg '.' '["sh", "-c", "kill -USR1 $$"]'
	run oci run -b "$B" r2
	assert_status 138
	nothing_left r2
}

@test "run -d, kill by number and SIGKILL: the box goes, delete leaves nothing" {
	cfg '.' '["sh", "-c", "echo up; sleep 30", "oci-d1-marker"]'
	oci run -d -b "$B" --pid-file "$BATS_TEST_TMPDIR/pid" d1 </dev/null >"$O" 2>&1 3>&-
	[ "$(state_of d1)" = running ]
	wait_for "$O" "^up$" 5
	run oci kill d1 9
	assert_status 0
	wait_state d1 stopped
	run oci kill d1 KILL
	assert_status 1
	assert_line_re "container d1 is stopped"
	oci delete d1
	nothing_left d1
}

@test "kill --all: every process of the box's pid namespace gets the signal (each held as a pidfd before it is looked at); without it only the container's process" {
	# The container's process and a child of it, each saying which got USR2.
	cat >"$ROOTFS/ka.sh" <<-'EOF'
	sh -c 'trap "echo child-usr2" USR2; echo child-up; while :; do sleep 0.1; done' &
	trap "echo main-usr2" USR2
	echo main-up
	while :; do sleep 0.1; done
	EOF
	cfg '.' '["sh", "/ka.sh", "oci-ka-marker"]'
	oci run -d -b "$B" ka </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^child-up$" 5
	wait_for "$O" "^main-up$" 5
	run oci kill ka USR2
	assert_status 0
	wait_for "$O" "^main-usr2$" 5
	sleep 0.3
	! grep -q "^child-usr2$" "$O" || { echo "USR2 without --all reached the child"; cat "$O"; return 1; }
	run oci kill ka USR2 --all
	assert_status 0
	wait_for "$O" "^child-usr2$" 5
	sleep 0.3
	# Each process once: the container's process is not also sent it through PID 1.
	[ "$(grep -c "^main-usr2$" "$O")" = 2 ] || { cat "$O"; return 1; }
	[ "$(grep -c "^child-usr2$" "$O")" = 1 ] || { cat "$O"; return 1; }
	oci kill ka KILL
	wait_state ka stopped
	oci delete ka
	nothing_left ka
}

@test "kill of a created container ends it before its process runs; delete of a created one kills it" {
	oci create -b "$B" k1 </dev/null >"$O" 2>&1 3>&-
	oci kill k1 SIGTERM
	wait_state k1 stopped
	oci delete k1
	! grep -q started "$O" || false
	nothing_left k1
	oci create -b "$B" k2 </dev/null >"$O" 2>&1 3>&-
	run oci delete k2
	assert_status 0
	nothing_left k2
}

@test "delete refuses a running container without --force; SIGKILL of the supervisor leaves nothing after delete" {
	cfg '.' '["sh", "-c", "sleep 30", "oci-f1-marker"]'
	oci run -d -b "$B" --pid-file "$BATS_TEST_TMPDIR/pid" f1 </dev/null >"$O" 2>&1 3>&-
	run oci delete f1
	assert_status 1
	assert_line_re "delete: container f1 is running: stop it first, or use --force"
	run oci delete --force f1
	assert_status 0
	nothing_left f1
	cfg '.' '["sh", "-c", "sleep 30", "oci-f2-marker"]'
	oci run -d -b "$B" --pid-file "$BATS_TEST_TMPDIR/pid" f2 </dev/null >"$O" 2>&1 3>&-
	kill -KILL "$(cat "$BATS_TEST_TMPDIR/pid")"
	wait_state f2 stopped
	oci delete f2
	for i in $(seq 1 40); do pgrep -f oci-f2-marker >/dev/null || break; sleep 0.05; done
	nothing_left f2
	# runc's rule: -f deletes what is not there; a create that died
	# before its first state write leaves a directory delete removes.
	run oci delete -f f3
	assert_status 0
	run oci delete f3
	assert_status 1
	mkdir -p "$R/f4"
	oci delete f4
	[ ! -e "$R/f4" ]
}

@test "exec: a trailing command, --process FILE, -d with --pid-file; ps lists the box's processes" {
	cfg '.' '["sh", "-c", "echo up; sleep 30", "oci-x1-marker"]'
	oci run -d -b "$B" x1 </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^up$" 5
	run oci exec x1 sh -c 'echo in $(hostname) $(id -u) $GREETING; exit 4'
	assert_status 4
	[ "$output" = "in ocibox 0 hi" ]
	jq '.process | .args = ["sh", "-c", "echo proc $GREETING $(pwd) $(id -u)"] | .env = ["GREETING=yo", "PATH=/bin"] | .cwd = "/tmp"' \
		"$B/config.json" >"$BATS_TEST_TMPDIR/process.json"
	run oci exec --process "$BATS_TEST_TMPDIR/process.json" x1
	assert_status 0
	[ "$output" = "proc yo /tmp 0" ]
	jq '.process | .capabilities.bounding = ["CAP_SYS_ADMIN"]' "$B/config.json" >"$BATS_TEST_TMPDIR/process.json"
	run oci exec -p "$BATS_TEST_TMPDIR/process.json" x1
	assert_status 1
	assert_line_re "process.capabilities.bounding other than the container's is not supported"
	run oci exec --tty x1 true
	assert_status 1
	[ "$output" = "error: oci: exec: --tty is not supported" ]
	oci exec -d --pid-file "$BATS_TEST_TMPDIR/epid" x1 sh -c 'sleep 30' oci-x1-exec </dev/null >/dev/null 2>&1 3>&-
	epid=$(cat "$BATS_TEST_TMPDIR/epid")
	kill -0 "$epid"
	for i in $(seq 1 100); do [ "$(oci ps --format json x1 | jq length)" -ge 3 ] && break; sleep 0.05; done
	run oci ps --format json x1
	assert_status 0
	[ "$(jq length <<<"$output")" -ge 3 ]
	[ "$(jq ".[0]" <<<"$output")" = "$(oci state x1 >/dev/null; "$KERN" ps --json | jq '.[] | select(.name == "x1") | .pid1')" ]
	run oci ps x1
	assert_line_re "^PID	CMD$"
	assert_line_re "	sleep$"
	oci delete -f x1
	for i in $(seq 1 40); do kill -0 "$epid" 2>/dev/null || break; sleep 0.05; done
	! kill -0 "$epid" 2>/dev/null || false
	nothing_left x1
}

@test "uid and gid mappings: kern's own single and range maps for a user, refused for root [rootless]" {
	u=$(id -u) g=$(id -g)
	cfg ".linux.namespaces += [{type: \"user\"}] | .linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}] |
	     .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}] | del(.linux.resources)" \
		'["sh", "-c", "id -u; cat /proc/self/uid_map"]'
	if is_root; then
		run oci create -b "$B" m1
		refused m1 "linux.uidMappings: root's boxes map kern's own subordinate ids"
		return
	fi
	run oci run -b "$B" m1
	assert_status 0
	[ "${lines[0]}" = 0 ]
	[ "$(echo ${lines[1]})" = "0 $u 1" ]
	nothing_left m1
	cfg ".linux.namespaces += [{type: \"user\"}] | .linux.uidMappings = [{containerID: 0, hostID: 4242, size: 1}] |
	     .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}]"
	run oci create -b "$B" m2
	refused m2 "linux.uidMappings: only kern's own maps are supported: \{0, $u, 1\}"
	read -r start count < <(awk -F: -v n="$(id -un)" '$1 == n { print $2, $3; exit }' /etc/subuid)
	read -r gstart gcount < <(awk -F: -v n="$(id -un)" '$1 == n { print $2, $3; exit }' /etc/subgid)
	[ -n "$start" ] && [ -n "$gstart" ] && [ -x /usr/bin/newuidmap ] || skip "no subordinate range for $(id -un)"
	cfg ".linux.namespaces += [{type: \"user\"}] | del(.linux.resources) |
	     .linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: $start, size: $count}] |
	     .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}, {containerID: 1, hostID: $gstart, size: $gcount}]" \
		'["sh", "-c", "cat /proc/self/uid_map"]'
	run oci run -b "$B" m3
	assert_status 0
	[ "$(echo ${lines[1]})" = "1 $start $count" ]
	nothing_left m3
}

# console_recv SOCKET OUT: accept one connection on SOCKET, take the
# descriptor it carries (runc's console socket protocol) and copy what
# the pty says to OUT, for up to 10 s.
console_recv() {
	python3 - "$1" "$2" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
c, _ = s.accept()
_, fds, _, _ = socket.recv_fds(c, 64, 1)
end = time.time() + 10
with open(sys.argv[2], "wb") as f:
    while time.time() < end:
        try:
            b = os.read(fds[0], 4096)
        except OSError:
            break
        if not b:
            break
        f.write(b)
        f.flush()
PY
	for i in $(seq 1 100); do [ -S "$1" ] && return 0; sleep 0.05; done
	return 1
}

@test "process.terminal: the box's pty goes to --console-socket; either without the other is refused" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	cfg '.process.terminal = true' '["sh", "-c", "test -t 0 && test -t 1 && echo is-a-tty"]'
	sock=$BATS_TEST_TMPDIR/console.sock
	console_recv "$sock" "$BATS_TEST_TMPDIR/tty" 3>&-
	oci create -b "$B" --console-socket "$sock" t1 </dev/null >"$O" 2>&1 3>&-
	oci start t1
	wait_for "$BATS_TEST_TMPDIR/tty" "^is-a-tty" 5
	wait_state t1 stopped
	! grep -q is-a-tty "$O" || false
	oci delete t1
	nothing_left t1
	run oci create -b "$B" t2
	refused t2 "create: process.terminal needs --console-socket"
	cfg '.'
	run oci create -b "$B" --console-socket "$sock" t3
	refused t3 "create: --console-socket needs process.terminal: true"
	wait
}

@test "an OOM kill against the config's memory limit: 137 and kern box's OOM line" {
	cfg '.linux.resources.memory.limit = 33554432' '["sh", "-c", "x=$(head -c 100000000 /dev/zero | tr \"\\\\0\" x); echo survived"]'
	run --separate-stderr oci run -b "$B" oom1
	assert_status 137
	[ -z "$output" ]
	grep -q "killed by the kernel's OOM killer against this box's own memory cap" <<<"$stderr"
	nothing_left oom1
}

@test "the config's limits, rlimits and masks reach the box" {
	cfg '.' '["sh", "-c", "wc -c </proc/keys; ulimit -n; echo x >/proc/sys/kernel/hostname || echo ro; sleep 30", "oci-l1-marker"]'
	oci run -d -b "$B" l1 </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^ro$" 5
	grep -qx 0 "$O"
	grep -qx 1024 "$O"
	# The box cgroup holds the caps (kern may nest a leaf below it).
	find /sys/fs/cgroup -path "*kern-box-l1-*" \( -name memory.max -o -name memory.limit_in_bytes \) \
		-exec cat {} + | grep -qx 268435456
	find /sys/fs/cgroup -path "*kern-box-l1-*" -name pids.max -exec cat {} + | grep -qx 64
	oci delete -f l1
	nothing_left l1
}

@test "linux.cgroupsPath is the box cgroup below each hierarchy's root, with cpu.shares; delete removes it, the parents stay as runc leaves them" {
	local top=kern-oci-test-$$ d m c
	echo "$top" >"$BATS_TEST_TMPDIR/cgtop"
	cfg ".linux.cgroupsPath = \"/$top/cp1\" | .linux.resources.cpu = {shares: 512}" \
		'["sh", "-c", "cat /proc/self/cgroup; echo up; sleep 30", "oci-cp1-marker"]'
	oci run -d -b "$B" cp1 </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^up$" 5
	m=$(awk '$9 == "cgroup" && $NF ~ /memory/ {print $5; exit}' /proc/self/mountinfo)
	c=$(awk '$9 == "cgroup" && $NF ~ /[,]cpu[,]|[ ,]cpu$|cpu,/ {print $5; exit}' /proc/self/mountinfo)
	if [ -n "$m" ]; then
		# cgroup v1: the caps on the path, the tasks one level down (kern's leaf).
		[ "$(cat "$m/$top/cp1/memory.limit_in_bytes")" = 268435456 ]
		grep -q . "$m/$top/cp1/box/cgroup.procs"
		[ "$(cat "$c/$top/cp1/cpu.shares")" = 512 ]
	else
		d=/sys/fs/cgroup/$top/cp1
		[ "$(cat "$d/memory.max")" = 268435456 ]
		[ "$(cat "$d/cpu.weight")" = 20 ]
	fi
	oci delete -f cp1
	nothing_left cp1
	for d in /sys/fs/cgroup/*/"$top" /sys/fs/cgroup/"$top"; do
		[ -d "$d" ] || continue
		[ ! -e "$d/cp1" ] || { echo "$d/cp1 left"; false; }
		rmdir "$d"
	done
}

@test "linux.cgroupsPath: from create to start the supervisor (the --pid-file pid) is in the box's memory cgroup, where engines watch for OOM; start, kill and delete move it back first" {
	local top=kern-oci-test-$$ m sup home d
	echo "$top" >"$BATS_TEST_TMPDIR/cgtop"
	m=$(awk '$9 == "cgroup" && $NF ~ /memory/ {print $5; exit}' /proc/self/mountinfo)
	[ -n "$m" ] || m=/sys/fs/cgroup
	home=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ || ($1 == "0" && $2 == "") {print $3; exit}' /proc/self/cgroup)
	cfg ".linux.cgroupsPath = \"/$top/om1\"" '["sh", "-c", "echo up; sleep 30"]'
	for verb in start kill delete; do
		oci create -b "$B" --pid-file "$BATS_TEST_TMPDIR/pid" om1 </dev/null >"$O" 2>&1 3>&-
		sup=$(cat "$BATS_TEST_TMPDIR/pid")
		grep -Eq "(:memory:|^0::)/$top/om1\$" "/proc/$sup/cgroup" ||
			{ echo "created: supervisor not in the box's memory cgroup:"; cat "/proc/$sup/cgroup"; false; }
		case $verb in
		start)
			oci start om1
			wait_for "$O" "^up$" 5
			grep -Eq "(:memory:|^0::)$home\$" "/proc/$sup/cgroup" ||
				{ echo "started: supervisor not back in $home:"; cat "/proc/$sup/cgroup"; false; }
			# The box's own processes stay in its cgroup.
			grep -q . <(cat "$m/$top/om1/cgroup.procs" "$m/$top/om1"/*/cgroup.procs 2>/dev/null)
			oci delete -f om1 ;;
		kill)
			oci kill om1 KILL
			wait_state om1 stopped
			oci delete om1 ;;
		delete)
			oci delete -f om1 ;;
		esac
		nothing_left om1
		[ ! -e "$m/$top/om1" ] || { echo "$verb: $m/$top/om1 left"; false; }
	done
	for d in /sys/fs/cgroup/*/"$top" /sys/fs/cgroup/"$top"; do
		[ ! -d "$d" ] || rmdir "$d"
	done
}

@test "linux.cgroupsPath: the systemd form, '..', empty components and over-long paths are refused in one line, nothing made" {
	cfg '.linux.cgroupsPath = "system.slice:kern:cp2"'
	run oci create -b "$B" cp2
	refused cp2 "linux.cgroupsPath 'system.slice:kern:cp2' is the systemd form \(slice:prefix:name\), which is not supported"
	for p in /a/../../b /a//b /a/./b a/b/ / "/a/b c"; do
		cfg ".linux.cgroupsPath = \"$p\""
		run oci create -b "$B" cp2
		refused cp2 "linux.cgroupsPath '$p': expected a cgroupfs path"
	done
	cfg ".linux.cgroupsPath = \"/$(printf 'a%.0s' $(seq 600))\""
	run oci create -b "$B" cp2
	refused cp2 "linux.cgroupsPath '/aaa*': expected a cgroupfs path"
	cfg '.linux.resources.cpu = {shares: 1}'
	run oci create -b "$B" cp2
	refused cp2 "linux.resources.cpu.shares must be 0 \(unset\) or from 2 to 262144"
	! find /sys/fs/cgroup -maxdepth 2 -name b -newer "$B/config.json" | grep -q . || false
}

@test "a tmpfs's mode=, strictatime, noexec and size= options (containerd's /run) are the box's mount; a bad mode is refused naming it" {
	cfg '.mounts += [{destination: "/run", type: "tmpfs", source: "tmpfs",
		options: ["nosuid", "strictatime", "mode=755", "size=65536k", "noexec"]}]' \
		'["sh", "-c", "stat -c %a /run; grep \" /run \" /proc/mounts"]'
	run oci run -b "$B" tm1
	assert_status 0
	[ "${lines[0]}" = 755 ]
	[[ ${lines[1]} == "tmpfs /run tmpfs "* ]]
	[[ ${lines[1]} == *nosuid* && ${lines[1]} == *nodev* && ${lines[1]} == *noexec* ]]
	[[ ${lines[1]} == *size=65536k* ]]
	# strictatime: the kernel lists no relatime (nor noatime) for it.
	[[ ${lines[1]} != *relatime* && ${lines[1]} != *noatime* ]]
	nothing_left tm1
	cfg '.mounts += [{destination: "/run", type: "tmpfs", source: "tmpfs", options: ["mode=1999"]}]'
	run oci create -b "$B" tm2
	refused tm2 "mounts\[4\].options: bad 'mode=1999' \(an octal mode up to 7777\)"
	cfg '.mounts += [{destination: "/run", type: "tmpfs", source: "tmpfs", options: ["exec"]}]'
	run oci create -b "$B" tm2
	refused tm2 "mounts\[4\].options: 'exec' is not supported on a tmpfs"
}

@test "a sysfs mount is the box's own network namespace's, read-only, its firmware and debug entries masked; /sys masks kern does not make are refused" {
	cfg '.mounts += [{destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]}]
		| .linux.maskedPaths += ["/sys/firmware", "/sys/devices/virtual/powercap"]' \
		'["sh", "-c", "ls /sys/class/net; ls /sys/firmware | wc -l; grep \" /sys \" /proc/mounts; echo x >/sys/kernel/uevent_helper || echo ro"]'
	run oci run -b "$B" sy1
	assert_status 0
	# Only the box's loopback: the host's interfaces are another namespace's.
	[ "${lines[0]}" = lo ]
	[ "${lines[1]}" = 0 ]
	[[ ${lines[2]} == "sysfs /sys sysfs ro,nosuid,nodev,noexec"* ]]
	assert_line_re "^ro$"
	nothing_left sy1
	cfg '.mounts += [{destination: "/sys", type: "sysfs", source: "sysfs", options: ["ro"]}]
		| .linux.maskedPaths += ["/sys/class"]'
	run oci create -b "$B" sy2
	refused sy2 "linux.maskedPaths\[3\] '/sys/class' is not supported: kern's sysfs masks /sys/\{firmware,"
	cfg '.mounts += [{destination: "/sys", type: "sysfs", source: "sysfs", options: ["ro"]}]
		| .linux.namespaces -= [{type: "network"}]'
	run oci create -b "$B" sy2
	refused sy2 "mounts\[4\]: a sysfs needs a 'network' entry in linux.namespaces"
}

@test "a root on overlayfs (the engines' snapshots), which cannot be idmapped: container root is host root in a user namespace mapping 0 to 0; with a 'user' entry refused" {
	local ov=$BATS_TEST_TMPDIR/ov
	mkdir -p "$ov/upper" "$ov/work" "$ov/merged"
	mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$ov/upper,workdir=$ov/work" "$ov/merged"
	cfg ".root.path = \"$ov/merged\"" '["sh", "-c", "mkdir /made && touch /made/f && id -u && cat /proc/self/uid_map"]'
	run oci run -b "$B" ovl1
	umount "$ov/merged"
	assert_status 0
	[ "${lines[0]}" = 0 ]
	# 0 maps to 0, and the file landed in the engine's upper layer as host root's.
	[[ ${lines[1]} =~ ^\ *0\ +0\ + ]]
	[ "$(stat -c %u:%g "$ov/upper/made/f")" = 0:0 ]
	nothing_left ovl1
	mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$ov/upper,workdir=$ov/work" "$ov/merged"
	cfg ".root.path = \"$ov/merged\" | .linux.namespaces += [{type: \"user\"}]"
	run oci create -b "$B" ovl2
	umount "$ov/merged"
	refused ovl2 "linux.namespaces: a 'user' entry on root.path .*, an overlayfs mount, is not supported"
}

@test "a network namespace path is joined (podman's, a pod's): the box sees its addresses in /proc/net and its devices in a sysfs of that namespace; hostile paths fail create" {
	command -v ip >/dev/null || skip "ip (iproute2) is not installed"
	local ns=kern-oci-t$$
	ip netns add "$ns"
	echo "$ns" >"$BATS_TEST_TMPDIR/netns"
	# Marks of that namespace: an address on its lo, an alias of its lo.
	ip -n "$ns" addr add 10.123.45.67/32 dev lo
	ip -n "$ns" link set lo alias kern-oci-mark
	cfg ".linux.namespaces |= map(if .type == \"network\" then .path = \"/run/netns/$ns\" else . end)
		| .mounts += [{destination: \"/sys\", type: \"sysfs\", source: \"sysfs\", options: [\"ro\", \"nosuid\"]}]" \
		'["sh", "-c", "grep -c 10.123.45.67 /proc/net/fib_trie; cat /sys/class/net/lo/ifalias; ls /sys/firmware | wc -l"]'
	run oci run -b "$B" nj1
	assert_status 0
	[ "${lines[0]}" -ge 1 ]
	[ "${lines[1]}" = kern-oci-mark ]
	[ "${lines[2]}" = 0 ]
	nothing_left nj1
	# The same namespace as a pod's containers name their sandbox's: a
	# process's /proc/PID/ns entry (a procfs symlink), and a symlink to that.
	ip netns exec "$ns" sleep 60 &
	local holder=$!
	echo "$holder" >"$BATS_TEST_TMPDIR/holder"
	ln -s "/proc/$holder/ns/net" "$BATS_TEST_TMPDIR/nslink"
	for p in "/proc/$holder/ns/net" "$BATS_TEST_TMPDIR/nslink"; do
		cfg ".linux.namespaces |= map(if .type == \"network\" then .path = \"$p\" else . end)
			| .mounts += [{destination: \"/sys\", type: \"sysfs\", source: \"sysfs\", options: [\"ro\", \"nosuid\"]}]" \
			'["cat", "/sys/class/net/lo/ifalias"]'
		run oci run -b "$B" nj3
		assert_status 0
		[ "${lines[0]}" = kern-oci-mark ] || { echo "$p: $output"; false; }
		nothing_left nj3
	done
	kill "$holder"
	ip netns del "$ns"
	rm "$BATS_TEST_TMPDIR/netns"
	# Not a namespace (a FIFO too, which is never opened: no hang),
	# another type of namespace, directly and through a symlink: 125, said
	# why.
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	ln -s /proc/self/ns/ipc "$BATS_TEST_TMPDIR/ipclink"
	touch "$BATS_TEST_TMPDIR/ipcns"
	mount --bind /proc/self/ns/ipc "$BATS_TEST_TMPDIR/ipcns"
	for p in /etc/passwd:"not an nsfs file" "$BATS_TEST_TMPDIR/fifo":"not an nsfs file" \
		 "$BATS_TEST_TMPDIR/ipcns":"another namespace type" \
		 "$BATS_TEST_TMPDIR/ipclink":"another namespace type" /proc/self/ns/uts:"another namespace type"; do
		cfg ".linux.namespaces |= map(if .type == \"network\" then .path = \"${p%%:*}\" else . end)"
		run timeout -s KILL 20 "$KERN" oci --root "$R" create -b "$B" nj2
		assert_status 125
		assert_line_re "${p#*:}"
		nothing_left nj2
	done
	umount "$BATS_TEST_TMPDIR/ipcns"
}

@test "IPC and UTS namespace paths are joined (a pod's shared ones): the box has their name, SysV queues and mqueue; sysctl and exec reach them" {
	command -v unshare >/dev/null && command -v ipcmk >/dev/null || skip "unshare or ipcmk (util-linux) is not installed"
	local d=$BATS_TEST_TMPDIR/pod
	mkdir -p "$d"
	touch "$d/ipc" "$d/uts"
	# The pod's namespaces, kept by bind mounts: a name and a message queue.
	unshare --ipc="$d/ipc" --uts="$d/uts" sh -c 'hostname kernpod; ipcmk -Q >/dev/null'
	cfg ".hostname = \"\" | .linux.namespaces |= map(if .type == \"ipc\" then .path = \"$d/ipc\"
		elif .type == \"uts\" then .path = \"$d/uts\" else . end) | .linux.sysctl = {\"kernel.msgmax\": \"4242\"}" \
		'["sh", "-c", "hostname; tail -n +2 /proc/sysvipc/msg | wc -l; grep -c \" /dev/mqueue mqueue \" /proc/mounts; cat /proc/sys/kernel/msgmax; echo started; sleep 30"]'
	oci run -d -b "$B" pj1 </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^started$" 5
	[ "$(head -4 "$O" | tr '\n' ' ')" = "kernpod 1 1 4242 " ] || { cat "$O"; false; }
	# The sysctl went into the pod's namespace, as runc's would.
	[ "$(nsenter --ipc="$d/ipc" cat /proc/sys/kernel/msgmax)" = 4242 ]
	run oci exec pj1 sh -c 'hostname; tail -n +2 /proc/sysvipc/msg | wc -l'
	assert_status 0
	[ "${lines[*]}" = "kernpod 1" ]
	oci delete -f pj1
	nothing_left pj1
	umount "$d/ipc" "$d/uts"
	cfg '.linux.namespaces |= map(if .type == "pid" then .path = "/proc/1/ns/pid" else . end)'
	run oci create -b "$B" pj2
	refused pj2 "linux.namespaces\[0\].path: joining a 'pid' namespace is not supported"
	cfg ".linux.namespaces |= map(if .type == \"uts\" then .path = \"$d/uts\" else . end)"
	run oci create -b "$B" pj2
	refused pj2 "hostname with a joined uts namespace \(linux.namespaces\[3\].path\) is not supported"
}

@test "linux.resources.memory.swap at or above the limit (podman writes twice it) is the memory cap alone, swap 0; below it refused" {
	cfg '.linux.resources.memory = {limit: 33554432, swap: 67108864}' \
		'["sh", "-c", "x=$(head -c 50000000 /dev/zero | tr \"\\0\" x); echo survived"]'
	run --separate-stderr oci run -b "$B" sw1
	# 50 MB does not fit 32 MiB, whatever swap was offered: no swap at all.
	assert_status 137
	nothing_left sw1
	cfg '.linux.resources.memory = {limit: 33554432, swap: 16777216}'
	run oci create -b "$B" sw2
	refused sw2 "linux.resources.memory.swap 16777216: a box never swaps \(give -1, or a value at or above linux.resources.memory.limit\)"
}

@test "process.user.additionalGids: the primary gid alone (containerd's [0] for root) runs; another gid is refused naming it" {
	cfg '.process.user = {uid: 0, gid: 0, additionalGids: [0]}' '["sh", "-c", "id -g; echo ran"]'
	run oci run -b "$B" ag1
	assert_status 0
	assert_line_re "^ran$"
	assert_line_re "^0$"
	nothing_left ag1
	cfg '.process.user = {uid: 0, gid: 0, additionalGids: [0, 10]}'
	run oci create -b "$B" ag2
	refused ag2 "process.user.additionalGids\[1\] 10 is not supported: kern gives the process its primary group \(0\) only"
}

@test "start returns once the container's process is past its execve, as runc's: a signal right after start finds it (runtime-tools' killsig)" {
	cfg '.' '["sleep", "30"]'
	for i in $(seq 1 15); do
		oci create -b "$B" st$i </dev/null >"$O" 2>&1 3>&-
		sup=$(oci state st$i | jq -r .pid)
		oci start st$i
		# Builtins only, right after start: PID 1 (the supervisor's child)
		# has a child, and it is sleep, not kern's spawn of it. (The
		# children files end without a newline: read's status is 1.)
		init= kid= c=
		read -r init </proc/$sup/task/$sup/children || [ -n "$init" ]
		read -r kid </proc/$init/task/$init/children || true
		[ -z "$kid" ] || read -r c </proc/$kid/comm || true
		[ "$c" = sleep ] || { echo "run $i: PID 1's child is '$kid' named '$c' when start returned"; false; }
		oci delete -f st$i
		nothing_left st$i
	done
}

@test "process.user root: the process's groups are the config's, never those the root's /etc/group gives root (runtime-tools' rootfs lists it in ten)" {
	r=$BATS_TEST_TMPDIR/groups-root
	cp -a "$ROOTFS" "$r"
	printf 'root:x:0:root\ndisk:x:6:root,adm\nwheel:x:10:root\nvideo:x:27:root\n' >"$r/etc/group"
	cfg ".root.path = \"$r\"" '["sh", "-c", "id -G; echo ran"]'
	run oci run -b "$B" gr1
	assert_status 0
	assert_line_re "^ran$"
	assert_line_re "^0$"
	nothing_left gr1
}

@test "linux.sysctl: namespaced keys written in the box before its process starts (create+start, run -d); the host's stay; others refused" {
	host_pgr=$(cat /proc/sys/net/ipv4/ping_group_range) host_shm=$(cat /proc/sys/kernel/shmmax)
	cfg '.linux.sysctl = {"net.ipv4.ping_group_range": "0 0", "kernel.shmmax": "123456789"}' \
		'["sh", "-c", "cat /proc/sys/net/ipv4/ping_group_range /proc/sys/kernel/shmmax; echo x > /proc/sys/kernel/shmmax || echo ro; sleep 30", "oci-sy1-marker"]'
	oci create -b "$B" sy1 </dev/null >"$O" 2>&1 3>&-
	oci start sy1
	wait_for "$O" "^ro$" 5
	grep -qP '^0\t0$' "$O" || { cat "$O"; false; }
	grep -qx 123456789 "$O"
	[ "$(cat /proc/sys/net/ipv4/ping_group_range)" = "$host_pgr" ]
	[ "$(cat /proc/sys/kernel/shmmax)" = "$host_shm" ]
	oci delete -f sy1
	nothing_left sy1
	# run -d is create then start: the value is there from the first line.
	oci run -d -b "$B" sy2 </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^ro$" 5
	grep -qx 123456789 "$O"
	oci delete -f sy2
	nothing_left sy2
	# A run in the foreground has no gate to write it at.
	run oci run -b "$B" sy3
	refused sy3 "run: linux.sysctl needs create and start, or run -d"
	cfg '.linux.sysctl = {"kernel.hostname": "x"}'
	run oci create -b "$B" sy3
	refused sy3 "linux.sysctl.kernel.hostname is not supported: only keys of the box's own namespaces"
	cfg '.linux.sysctl = {"net.ipv4.ip_forward": "1"} | .linux.namespaces -= [{type: "network"}]'
	run oci create -b "$B" sy3
	refused sy3 "linux.sysctl.net.ipv4.ip_forward needs a 'network' entry in linux.namespaces"
	cfg '.linux.sysctl = {"net/../../kernel/x": "1"}'
	run oci create -b "$B" sy3
	refused sy3 "linux.sysctl: 'net/../../kernel/x' is not a sysctl name"
	cfg '.linux.sysctl = {"net.ipv4.no_such_key": "1"}'
	oci create -b "$B" sy4 </dev/null >"$O" 2>&1 3>&- && rc=0 || rc=$?
	[ "$rc" = 125 ] || { cat "$O"; false; }
	grep -q "linux.sysctl.net.ipv4.no_such_key: open /proc/sys/net/ipv4/no_such_key: No such file or directory" "$O"
	nothing_left sy4
}

@test "a bind with noexec (podman's /dev/shm) is a noexec mount in the box" {
	mkdir -p "$BATS_TEST_TMPDIR/shm"
	cp "$ROOTFS/bin/busybox" "$BATS_TEST_TMPDIR/shm/bb"
	cfg ".mounts += [{destination: \"/dev/shm\", type: \"bind\", source: \"$BATS_TEST_TMPDIR/shm\",
		options: [\"bind\", \"rprivate\", \"nosuid\", \"noexec\", \"nodev\"]}]" \
		'["sh", "-c", "grep \" /dev/shm \" /proc/self/mounts; /dev/shm/bb true; echo rc=$?"]'
	run oci run -b "$B" nx1
	assert_status 0
	assert_line_re "/dev/shm .*nosuid,nodev,noexec"
	assert_line_re "^rc=126$"
	nothing_left nx1
}

@test "masked and read-only /proc paths this kernel does not have are accepted and absent in the box; a process's entries are not" {
	# runc spec and podman list /proc/timer_stats (gone since Linux 4.11).
	[ ! -e /proc/timer_stats ] || skip "this kernel has /proc/timer_stats"
	cfg '.linux.maskedPaths += ["/proc/timer_stats"] | .linux.readonlyPaths += ["/proc/timer_stats/x"]' \
		'["sh", "-c", "test -e /proc/timer_stats && echo present || echo absent"]'
	run oci run -b "$B" ab1
	assert_status 0
	[ "$output" = absent ]
	nothing_left ab1
	cfg '.linux.maskedPaths += ["/proc/self/no-such-entry"]'
	run oci create -b "$B" ab2
	refused ab2 "linux.maskedPaths\[3\] '/proc/self/no-such-entry' is not supported"
	cfg '.linux.maskedPaths += ["/proc/1/no-such-entry"]'
	run oci create -b "$B" ab2
	refused ab2 "linux.maskedPaths\[3\] '/proc/1/no-such-entry' is not supported"
}

@test "linux.seccomp is compiled and loaded with kern's own filter: the profile's errno, its args, and kern's kill of mount both hold; exec gets it too" {
	names=$(seq 1 400 | sed 's/^/sc_/' | jq -R . | jq -s '. + ["mkdir", "mkdirat"]')
	cfg ".linux.seccomp = {defaultAction: \"SCMP_ACT_ALLOW\", architectures: [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\"],
		syscalls: [{names: $names, action: \"SCMP_ACT_ERRNO\", errnoRet: 13},
			   {names: [\"setpriority\"], action: \"SCMP_ACT_ERRNO\", errnoRet: 22,
			    args: [{index: 2, value: 5, op: \"SCMP_CMP_EQ\"}]}]}" \
		'["sh", "-c", "mkdir /tmp/d 2>&1; renice -n 5 -p $$ >/dev/null 2>&1; echo nice5=$?; renice -n 3 -p $$ >/dev/null 2>&1; echo nice3=$?; mount -t tmpfs t /tmp; echo mount=$?"]'
	run oci run -b "$B" sc1
	assert_status 0
	assert_line_re "can't create directory '/tmp/d': Permission denied"
	# The profile's rule with args: EINVAL for 5 (renice says 1), 3 goes.
	assert_line_re "^nice5=1$"
	assert_line_re "^nice3=0$"
	# kern's own filter kills mount(2), which the profile allows: 128 + SIGSYS.
	assert_line_re "^mount=159$"
	nothing_left sc1
	# An exec in the container is under the same two filters.
	cfg ".linux.seccomp = {defaultAction: \"SCMP_ACT_ALLOW\", syscalls: [{names: [\"mkdir\", \"mkdirat\"],
		action: \"SCMP_ACT_ERRNO\", errnoRet: 13}]}"
	oci run -d -b "$B" sc2 </dev/null >"$O" 2>&1 3>&-
	wait_for "$O" "^started$" 5
	run oci exec sc2 sh -c 'mkdir /tmp/e; echo rc=$?'
	assert_line_re "Permission denied"
	assert_line_re "^rc=1$"
	oci delete -f sc2
	nothing_left sc2
}

@test "linux.seccomp with the dynamic build: libseccomp is opened when create needs it, and the profile holds" {
	file -L "$KERN_DYN" | grep -q 'dynamically linked' || skip "$KERN_DYN is not the dynamic build"
	cfg '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["mkdir", "mkdirat"],
		action: "SCMP_ACT_ERRNO", errnoRet: 13}]}' '["sh", "-c", "mkdir /tmp/d 2>&1; echo rc=$?"]'
	LD_DEBUG=files "$KERN_DYN" oci --root "$R" run -b "$B" scd >"$O" 2>&1
	run cat "$O"
	assert_line_re 'file=libseccomp\.so\.[0-9]+ \[0\];  dynamically loaded by '
	assert_line_re "can't create directory '/tmp/d': Permission denied"
	assert_line_re "^rc=1$"
	nothing_left scd
}

@test "linux.seccomp: a comparison without valueTwo compares with 0 (the default profiles' clone rule, SCMP_CMP_MASKED_EQ as Go's omitempty writes it)" {
	cfg '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["setpriority"],
		action: "SCMP_ACT_ERRNO", errnoRet: 22, args: [{index: 2, value: 4, op: "SCMP_CMP_MASKED_EQ"}]}]}' \
		'["sh", "-c", "renice -n 3 -p $$ >/dev/null 2>&1; echo nice3=$?; renice -n 5 -p $$ >/dev/null 2>&1; echo nice5=$?"]'
	run oci run -b "$B" sc0
	assert_status 0
	# 3 & 4 == 0: the rule's EINVAL; 5 & 4 != 0 goes.
	assert_line_re "^nice3=1$"
	assert_line_re "^nice5=0$"
	nothing_left sc0
}

@test "linux.seccomp that kern cannot honour is refused in one line, nothing made" {
	cfg '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["read"], action: "SCMP_ACT_NOTIFY"}]}'
	run oci create -b "$B" sc3
	refused sc3 "linux.seccomp.syscalls\[0\].action: SCMP_ACT_NOTIFY is not supported \(kern runs no tracer and no seccomp agent\)"
	cfg '.linux.seccomp = {defaultAction: "SCMP_ACT_TRACE"}'
	run oci create -b "$B" sc3
	refused sc3 "linux.seccomp.defaultAction: SCMP_ACT_TRACE is not supported"
}

@test "bad bundles: one line naming the field, exit 1, nothing made" {
	cfg '.linux.intelRdt = {closID: "x"}'
	run oci create -b "$B" bad1
	refused bad1 "^error: oci: create: config.json: linux.intelRdt is not supported$"
	cfg '.process.user.username = "x"'
	run oci create -b "$B" bad1
	refused bad1 "process.user.username is not supported"
	cfg '.root.path = "/"'
	run oci create -b "$B" bad2
	refused bad2 "root.path / resolves to /: refused"
	ln -sfn / "$BATS_TEST_TMPDIR/slash"
	cfg ".root.path = \"$BATS_TEST_TMPDIR/slash\""
	run oci create -b "$B" bad2
	refused bad2 "resolves to /: refused"
	cfg '.mounts += [{destination: "/tmp/../../etc", type: "bind", source: "/tmp", options: ["bind"]}]'
	run oci create -b "$B" bad3
	refused bad3 "mounts\[4\].destination '/tmp/../../etc' must be an absolute path without"
	cfg '.mounts += [{destination: "/x", type: "bind", source: "/tmp", options: ["bind", "suid"]}]'
	run oci create -b "$B" bad3
	refused bad3 "mounts\[4\].options: 'suid' is not supported on a bind mount"
	cfg '.linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO", syscalls: [{names: ["read"], action: "SCMP_ACT_BOGUS"}]}'
	run oci create -b "$B" bad4
	refused bad4 "linux.seccomp.syscalls\[0\].action: unknown action 'SCMP_ACT_BOGUS'"
	cfg '.hooks = {prestart: [{path: "/bin/true"}]}'
	run oci create -b "$B" bad5
	refused bad5 "hooks is not supported: kern runs no hooks"
	head -c $((5 << 20)) /dev/zero | tr '\0' x | jq -R '{ociVersion: "1.0.2", annotations: {pad: .}}' >"$B/config.json"
	run oci create -b "$B" bad6
	refused bad6 "config.json: larger than 4 MiB: refused"
	echo '{"ociVersion": "1.0.2", "root": {"path": "x"' >"$B/config.json"
	run oci create -b "$B" bad7
	refused bad7 "config.json is not valid JSON"
}

@test "--root that another user owns or others may write is refused before anything is made in it" {
	mkdir -p "$R"
	chmod 0777 "$R"
	run oci create -b "$B" r1
	refused r1 "^error: oci: --root $R must be a directory of uid 0 that no one else can write \(it is a directory of uid 0, mode 0777\): refusing$"
	[ -z "$(ls -A "$R")" ]
	chmod 0700 "$R"
	chown 65534 "$R"
	run oci create -b "$B" r1
	refused r1 "it is a directory of uid 65534, mode 0700"
	[ -z "$(ls -A "$R")" ]
	chown 0 "$R"
	oci create -b "$B" r1 </dev/null >"$O" 2>&1 3>&-
	[ "$(state_of r1)" = created ]
	oci delete -f r1
}

@test "a mount through a symlink out of the root fails create with 125, nothing made on the host" {
	ln -sfn /etc "$ROOTFS/esc"
	cfg ".mounts += [{destination: \"/esc/kern-oci-escape\", type: \"bind\", source: \"$ROOTFS/bin\", options: [\"rbind\", \"ro\"]}]"
	oci create -b "$B" esc1 </dev/null >"$O" 2>&1 3>&- && rc=0 || rc=$?
	rm -f "$ROOTFS/esc"
	[ "$rc" = 125 ] || { cat "$O"; false; }
	grep -q "a component is a symlink in the box root" "$O"
	[ ! -e /etc/kern-oci-escape ]
	nothing_left esc1
}

@test "--log-format json: a create that fails in kern box's setup logs kern box's own error as the last line" {
	# containerd's shim and podman report the log's last error line.
	cfg '.mounts += [{destination: "/x", type: "bind", source: "/nonexistent-kern-oci-src", options: ["bind"]}]'
	L=$BATS_TEST_TMPDIR/log.json
	"$KERN" oci --root "$R" --log "$L" --log-format json create -b "$B" lg1 </dev/null >"$O" 2>&1 3>&- && rc=0 || rc=$?
	[ "$rc" = 125 ] || { cat "$O"; false; }
	tail -n 1 "$L" | jq -e '.level == "error" and (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")) and
		(.msg | test("^kern: sandbox setup failed: --mount source /nonexistent-kern-oci-src: No such file or directory$"))'
	# Every line is one JSON object.
	jq -e . "$L" >/dev/null
	# The text format carries the same line.
	"$KERN" oci --root "$R" --log "$L.txt" create -b "$B" lg1 </dev/null >"$O" 2>&1 3>&- || true
	grep -q 'level=error msg="kern: sandbox setup failed: --mount source /nonexistent-kern-oci-src' "$L.txt"
	nothing_left lg1
	# A failure in the box's PID 1 (relayed by the supervisor) is the last line too.
	ln -sfn /etc "$ROOTFS/esc"
	cfg ".mounts += [{destination: \"/esc/kern-oci-escape\", type: \"bind\", source: \"$ROOTFS/bin\", options: [\"rbind\", \"ro\"]}]"
	"$KERN" oci --root "$R" --log "$L" --log-format json create -b "$B" lg2 </dev/null >"$O" 2>&1 3>&- && rc=0 || rc=$?
	rm -f "$ROOTFS/esc"
	[ "$rc" = 125 ] || { cat "$O"; false; }
	tail -n 1 "$L" | jq -e '.msg | test("^kern: sandbox setup failed: .*a component is a symlink in the box root")'
	nothing_left lg2
}

@test "features is JSON, also as kern-oci; --systemd-cgroup, pause and a duplicate id are refused in one line" {
	run "$TREE/build/bin/kern-oci" features
	assert_status 0
	jq -e . <<<"$output" >/dev/null
	run oci features
	assert_status 0
	[ "$(jq -r '.linux.cgroup.systemd' <<<"$output")" = false ]
	jq -e '.linux.namespaces | index("pid")' <<<"$output" >/dev/null
	# What seccomp.c compiles, and what it refuses (NOTIFY, TRACE) is not listed.
	jq -e '.linux.seccomp.enabled and (.linux.seccomp.actions | index("SCMP_ACT_ERRNO")) and
		(.linux.seccomp.actions | index("SCMP_ACT_NOTIFY") | not) and (.mountOptions | index("strictatime"))' \
		<<<"$output" >/dev/null
	run "$KERN" oci --systemd-cgroup state x
	assert_status 1
	assert_line_re "--systemd-cgroup is not supported: kern places cgroups itself"
	run oci pause x
	assert_status 1
	[ "$output" = "error: oci: pause is not supported" ]
	cfg '.' '["sh", "-c", "sleep 30", "oci-u1-marker"]'
	oci create -b "$B" u1 </dev/null >"$O" 2>&1 3>&-
	run oci create -b "$B" u1
	assert_status 1
	assert_line_re "create: container u1 already exists"
	oci delete u1
	nothing_left u1
	run "$KERN" oci --root "$R" --log "$BATS_TEST_TMPDIR/log" --log-format json state ../x
	assert_status 1
	jq -e '.level == "error" and (.msg | test("bad container id"))' "$BATS_TEST_TMPDIR/log"
}
