#!/usr/bin/env bats
# security-tests.md §3 (CAP-1..CAP-6) and the rest of isolation.md §5 and
# §2.7 steps 29-32: capability sets, the user switch, no_new_privs,
# setuid binaries, mknod, --ulimit and --apparmor.
load helper
load lockdown

setup() {
	kern_private_dirs
	require_helpers
}

# The expected default CapEff/CapBnd for this kernel (isolation.md §5).
default_caps() {
	local last
	last=$(cat /proc/sys/kernel/cap_last_cap)
	if [ "$last" -ge 40 ]; then echo 00000110bd84efff
	elif [ "$last" -ge 37 ]; then echo 00000010bd84efff
	else skip "cap_last_cap $last is below the range isolation.md §5 specifies"
	fi
}

caps_line() { # prints "Inh Prm Eff Bnd Amb NoNewPrivs" of the process running it
	awk '/^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):/ {printf "%s%s", sep, $2; sep=" "} END {print ""}' /proc/self/status
}

# As a user other than root (the range map of a box with --user):
# root switches users itself; the unprivileged user needs newuidmap.
range_box() {
	if is_root; then "$LOCKRUN" "$@"
	else unshare --map-auto -r "$LOCKRUN" "$@"
	fi
}

# A directory every uid can reach (bats' own temporary directory is 0700).
suid_dir() {
	local d
	d=$(mktemp -d /tmp/kern-suid.XXXXXX) && chmod 755 "$d" && echo "$d" >>"$BATS_FILE_TMPDIR/cleanup" && echo "$d"
}
teardown() {
	[ -f "$BATS_FILE_TMPDIR/cleanup" ] || return 0
	xargs rm -rf <"$BATS_FILE_TMPDIR/cleanup"
	rm -f "$BATS_FILE_TMPDIR/cleanup"
}

@test "CAP-1: a default box has CapEff and CapBnd of isolation.md §5, CapAmb 0, NoNewPrivs 1 [rootless]" {
	want=$(default_caps)
	run nolock awk '/^CapEff:/ {print $2}' /proc/self/status
	[ "$output" != "$want" ]	# control: the namespace alone keeps more
	run lockbox -- awk '/^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):/ {print $1, $2}' /proc/self/status
	assert_status 0
	assert_line_re "^CapEff: $want$"
	assert_line_re "^CapBnd: $want$"
	assert_line_re "^CapPrm: $want$"
	assert_line_re "^CapAmb: 0000000000000000$"
	assert_line_re "^NoNewPrivs: 1$"
}

@test "CAP-2: --cap-drop ALL empties CapEff, CapPrm, CapInh, CapAmb and CapBnd [rootless]" {
	run lockbox --cap-drop ALL -- awk '/^Cap/ {print $1, $2}' /proc/self/status
	assert_status 0
	[ "$(grep -c ' 0000000000000000$' <<<"$output")" -eq 5 ]
}

@test "CAP-3: --cap-drop ALL plus Docker's 14 --cap-add gives CapEff 00000000a80425fb [rootless]" {
	args=(--cap-drop ALL)
	for c in AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE NET_RAW SETFCAP \
		SETGID SETPCAP SETUID SYS_CHROOT; do
		args+=(--cap-add "$c")
	done
	run lockbox "${args[@]}" -- awk '/^(CapEff|CapBnd):/ {print $1, $2}' /proc/self/status
	assert_status 0
	assert_line_re '^CapEff: 00000000a80425fb$'
	assert_line_re '^CapBnd: 00000000a80425fb$'
}

@test "CAP-3: --cap-add is applied after every --cap-drop, names case-insensitive [rootless]" {
	run lockbox --cap-add cap_sys_admin --cap-drop all --cap-add Net_Admin -- awk '/^CapEff:/ {print $2}' /proc/self/status
	assert_status 0
	[ "$output" = 0000000000201000 ]
	run "$LOCKRUN" --cap-drop NOT_A_CAP -- true
	assert_status 1
	assert_line_re "unknown capability 'NOT_A_CAP'"
}

@test "CAP-4: a non-root --user has every capability set 0 [rootless]" {
	run range_box --user 1000:1000:1000,4 -- sh -c 'id -u; id -g; id -G; awk "/^Cap/ {print \$2}" /proc/self/status | sort -u'
	assert_status 0
	[ "${lines[0]}" = 1000 ] && [ "${lines[1]}" = 1000 ] && [ "${lines[2]}" = "1000 4" ]
	[ "${lines[3]}" = 0000000000000000 ] && [ "${#lines[@]}" -eq 4 ]
}

@test "CAP-4: an unmappable --user is a setup failure (125), not a silent root box [rootless]" {
	# a single-id map has only uid 0
	run lockbox --user 1000:1000 -- id -u
	assert_status 125
	assert_line_re '^kern: sandbox setup failed: set(res)?[ug]id|^kern: sandbox setup failed: setgroups'
	refute_line_re '^1000$'
}

@test "CAP-5: kern exec into a --cap-drop ALL box has CapEff 0" {
	require_box
	run "$KERN" exec --help
	grep -q -- '-u <user>' <<<"$output" || skip "kern exec is not built on this branch yet"
	"$KERN" box cap5 -d --rootfs / --cap-drop ALL -- sleep 30
	run "$KERN" exec cap5 -- awk '/^CapEff:/ {print $2}' /proc/self/status
	"$KERN" stop cap5 || true
	assert_status 0
	[ "$output" = 0000000000000000 ]
}

@test "CAP-5: the exec path refuses with 126 and the exec refusal line [rootless]" {
	run lockbox --for-exec --apparmor kern-none -- true
	assert_status 126
	assert_line_re "^kern: exec: cannot enter AppArmor profile 'kern-none': .* - refusing to run$"
}

@test "CAP-6: a setuid-root binary copied in gains no privilege under the lockdown" {
	require_root
	dir=$(suid_dir)
	cp "$PROBE" "$dir/suid-probe"
	chown 0:0 "$dir/suid-probe" && chmod 4755 "$dir/suid-probe"
	geteuid=107; [ "$arch" = aarch64 ] && geteuid=175
	# control: without no_new_privs the setuid bit works
	run setpriv --reuid 1000 --regid 1000 --clear-groups "$dir/suid-probe" "$geteuid"
	[ "$output" = "ok 0" ] || skip "setuid does not work on this filesystem ($output)"
	run "$LOCKRUN" --user 1000:1000 -- "$dir/suid-probe" "$geteuid"
	assert_status 0
	[ "$output" = "ok 1000" ]
}

@test "CAP-6: a setuid binary owned by box root stays inert for a box user [rootless]" {
	is_root && skip "the rootless variant (box root = the caller, a range map)"
	dir=$(suid_dir)
	cp "$PROBE" "$dir/suid-probe" && chmod 4755 "$dir/suid-probe"
	run unshare --map-auto -r setpriv --reuid 1000 --regid 1000 --clear-groups "$dir/suid-probe" 107
	[ "$output" = "ok 0" ] || skip "setuid does not work here ($output)"
	run range_box --user 1000:1000 -- "$dir/suid-probe" 107
	assert_status 0
	[ "$output" = "ok 1000" ]
}

@test "mknod of a device is refused in a box even with CAP_MKNOD kept [rootless]" {
	run lockbox -- python3 -c '
import os, stat
os.mknod("'"$BATS_TEST_TMPDIR"'/null", stat.S_IFCHR | 0o600, os.makedev(1, 3))'
	[ "$status" -ne 0 ]
	assert_line_re 'PermissionError|Operation not permitted'
	[ ! -e "$BATS_TEST_TMPDIR/null" ]
}

@test "--ulimit sets soft and hard limits before the workload [rootless]" {
	run lockbox --ulimit nofile=1024:2048 --ulimit core=0 -- sh -c 'ulimit -Sn; ulimit -Hn; ulimit -Sc; ulimit -Hc'
	assert_status 0
	[ "${lines[*]}" = "1024 2048 0 0" ]
	run lockbox --ulimit nofile=512 -- sh -c 'ulimit -Sn; ulimit -Hn'
	[ "${lines[*]}" = "512 512" ]
}

@test "--ulimit: soft above hard is a parse error; a limit the kernel refuses is 125 [rootless]" {
	run "$LOCKRUN" --ulimit nofile=2048:1024 -- true
	assert_status 1
	assert_line_re 'soft limit is above the hard limit'
	# above fs.nr_open: refused even to root
	run lockbox --ulimit nofile=unlimited -- true
	assert_status 125
	assert_line_re '^kern: sandbox setup failed: setrlimit\(nofile, unlimited:unlimited\): Operation not permitted$'
}

@test "--apparmor fails closed with 125 and a clear reason on a host without AppArmor [rootless]" {
	[ -d /sys/kernel/security/apparmor ] && skip "this host has AppArmor; the refusal test needs one without"
	run lockbox --apparmor kern-default -- echo ran
	assert_status 125
	refute_line_re '^ran$'
	assert_line_re "^kern: sandbox setup failed: cannot enter AppArmor profile 'kern-default': write /proc/self/attr/(apparmor/)?exec: .*AppArmor is not enabled here"
	run lockbox --apparmor '../x' -- echo ran
	assert_status 125
	assert_line_re "not valid"
}

@test "the workload runs filtered: Seccomp 2 and one filter in every mode [rootless]" {
	for mode in allowlist denylist allowlist-audit; do
		run lockbox --seccomp "$mode" -- awk '/^Seccomp(_filters)?:/ {print $2}' /proc/self/status
		assert_status 0
		[ "${lines[*]}" = "2 1" ]
	done
}
