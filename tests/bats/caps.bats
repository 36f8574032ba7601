#!/usr/bin/env bats
# security-tests.md §3 (CAP-1..CAP-6) and the rest of isolation.md §5 and §2.7
# (PID 1 part two, kern-seccomp) steps 29-32 in real boxes: capability sets,
# the user switch, no_new_privs, setuid binaries, mknod, --ulimit, --apparmor,
# --security-profile untrusted. A few unit-level cases use the host-side
# driver (lib/lockdown/lockdown.c alone).
load helper
load lockdown

setup() {
	kern_private_dirs
	require_helpers
}

# The expected default CapEff/CapBnd for this kernel (isolation.md §5,
# capabilities).
default_caps() {
	local last
	last=$(cat /proc/sys/kernel/cap_last_cap)
	if [ "$last" -ge 40 ]; then echo 00000110bd84efff
	elif [ "$last" -ge 37 ]; then echo 00000010bd84efff
	else skip "cap_last_cap $last is below the range isolation.md §5 specifies"
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

# Can this caller start a box with a non-root -u? (root needs a subordinate range)
can_map_users() { ! is_root || grep -q '^root:' /etc/subuid 2>/dev/null; }

@test "CAP-1: a default box has CapEff and CapBnd of isolation.md §5, CapAmb 0, NoNewPrivs 1 [rootless]" {
	want=$(default_caps)
	run nolock awk '/^CapEff:/ {print $2}' /proc/self/status
	[ "$output" != "$want" ]	# control: the namespace alone keeps more
	run inbox -- awk '/^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):/ {print $1, $2}' /proc/self/status
	assert_status 0
	assert_line_re "^CapEff: $want$"
	assert_line_re "^CapBnd: $want$"
	assert_line_re "^CapPrm: $want$"
	assert_line_re "^CapAmb: 0000000000000000$"
	assert_line_re "^NoNewPrivs: 1$"
}

@test "CAP-2: --cap-drop ALL empties CapEff, CapPrm, CapInh, CapAmb and CapBnd [rootless]" {
	run inbox --cap-drop ALL -- awk '/^Cap/ {print $1, $2}' /proc/self/status
	assert_status 0
	[ "$(grep -c ' 0000000000000000$' <<<"$output")" -eq 5 ]
}

@test "CAP-2: --security-profile untrusted drops every capability; KERN_SECCOMP cannot weaken it [rootless]" {
	run inbox --security-profile untrusted -- awk '/^(CapEff|CapBnd|Seccomp):/ {print $1, $2}' /proc/self/status
	assert_status 0
	assert_line_re '^CapEff: 0000000000000000$'
	assert_line_re '^CapBnd: 0000000000000000$'
	assert_line_re '^Seccomp: 2$'
	KERN_SECCOMP=allowlist-audit run inbox --security-profile untrusted -- true
	assert_status 1
	run inbox --security-profile untrusted --cap-add ALL -- true
	assert_status 1
}

@test "CAP-3: --cap-drop ALL plus Docker's 14 --cap-add gives CapEff 00000000a80425fb [rootless]" {
	args=(--cap-drop ALL)
	for c in AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE NET_RAW SETFCAP \
		SETGID SETPCAP SETUID SYS_CHROOT; do
		args+=(--cap-add "$c")
	done
	run inbox "${args[@]}" -- awk '/^(CapEff|CapBnd):/ {print $1, $2}' /proc/self/status
	assert_status 0
	assert_line_re '^CapEff: 00000000a80425fb$'
	assert_line_re '^CapBnd: 00000000a80425fb$'
}

@test "CAP-3: --cap-add is applied after every --cap-drop, names case-insensitive; an unknown name is exit 1 [rootless]" {
	run inbox --cap-add cap_sys_admin --cap-drop all --cap-add Net_Admin -- awk '/^CapEff:/ {print $2}' /proc/self/status
	assert_status 0
	[ "$output" = 0000000000201000 ]
	run inbox --cap-drop NOT_A_CAP -- true
	assert_status 1
	assert_line_re '^error: box: '
}

@test "CAP-4: a non-root --user has every capability set 0 [rootless]" {
	cmd='id -u; id -g; awk "/^Cap/ {print \$2}" /proc/self/status | sort -u'
	if can_map_users; then
		run inbox -u 1000:1000 -- sh -c "$cmd"
	else
		# root without a subordinate range cannot map 1000 into a box;
		# the lockdown itself is then checked on the host
		run "$LOCKRUN" --user 1000:1000:1000,4 -- sh -c "$cmd"
	fi
	assert_status 0
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[ "${lines[2]}" = 0000000000000000 ] && [ "${#lines[@]}" -eq 3 ]
}

@test "CAP-4: lockdown_apply refuses an unmappable user with 125, never a silent root box [rootless]" {
	# a single-id map has only uid 0
	run lockbox --user 1000:1000 -- id -u
	assert_status 125
	assert_line_re '^kern: sandbox setup failed: (setgroups|setres[ug]id)'
	refute_line_re '^1000$'
}

@test "CAP-5: kern exec into a --cap-drop ALL box has CapEff 0 [rootless]" {
	require_built exec
	name=cap5-$$
	"$KERN" box "$name" -d --image host -q --cap-drop ALL -- sleep 30
	run "$KERN" exec "$name" -- awk '/^CapEff:/ {print $2}' /proc/self/status
	"$KERN" stop "$name" >/dev/null 2>&1 || true
	assert_status 0
	[ "$output" = 0000000000000000 ]
}

@test "CAP-5: the exec path of lockdown_apply refuses with 126 and the exec refusal line [rootless]" {
	run lockbox --for-exec --apparmor kern-none -- true
	assert_status 126
	assert_line_re "^kern: exec: cannot enter AppArmor profile 'kern-none': .* - refusing to run$"
}

@test "CAP-6: a setuid-root binary copied into the workspace gains no privilege [rootless]" {
	dir=$(suid_dir)
	cp "$PROBE" "$dir/suid-probe" && chmod 4755 "$dir/suid-probe"
	geteuid=107; [ "$arch" = aarch64 ] && geteuid=175
	# control: without no_new_privs the setuid bit works (for box root:
	# the caller, who owns the file)
	if is_root; then
		run setpriv --reuid 1000 --regid 1000 --clear-groups "$dir/suid-probe" "$geteuid"
	else
		run unshare --map-auto -r setpriv --reuid 1000 --regid 1000 --clear-groups "$dir/suid-probe" "$geteuid"
	fi
	[ "$output" = "ok 0" ] || skip "setuid does not work on this filesystem ($output)"
	if can_map_users; then
		run inbox -v "$dir:/workspace" -u 1000:1000 -- /workspace/suid-probe "$geteuid"
	else
		run "$LOCKRUN" --user 1000:1000 -- "$dir/suid-probe" "$geteuid"
	fi
	assert_status 0
	[ "$output" = "ok 1000" ]
}

@test "mknod of a device is refused in a box even though CAP_MKNOD is kept [rootless]" {
	run inbox -- sh -c 'grep ^CapEff: /proc/self/status; mknod /tmp/null c 1 3 2>/dev/null; echo "mknod $?"; ls /tmp'
	assert_line_re '^mknod [1-9]'
	refute_line_re '^null$'
	[ $(( 0x$(awk '/^CapEff:/ {print $2}' <<<"$output") >> 27 & 1 )) -eq 1 ]
	run inbox -- python3 -c 'import os, stat; os.mknod("/tmp/sda", stat.S_IFBLK | 0o600, os.makedev(8, 0))'
	[ "$status" -ne 0 ]
	assert_line_re 'PermissionError'
}

@test "--ulimit sets soft and hard limits before the workload [rootless]" {
	run inbox --ulimit nofile=1024:2048 --ulimit core=0 -- sh -c 'ulimit -Sn; ulimit -Hn; ulimit -Sc; ulimit -Hc'
	assert_status 0
	[ "${lines[*]}" = "1024 2048 0 0" ]
	run inbox --ulimit nofile=512 -- sh -c 'ulimit -Sn; ulimit -Hn'
	[ "${lines[*]}" = "512 512" ]
	# as (RLIMIT_AS, an OCI config's too): KiB in the shell.
	run inbox --ulimit as=1073741824:2147483648 -- sh -c 'ulimit -Sv; ulimit -Hv'
	assert_status 0
	[ "${lines[*]}" = "1048576 2097152" ]
}

@test "--ulimit: soft above hard is exit 1; a limit the kernel refuses is 125 [rootless]" {
	run inbox --ulimit nofile=2048:1024 -- true
	assert_status 1
	assert_line_re '^error: box: .*soft limit is above the hard limit'
	# above fs.nr_open: refused even to root
	run inbox --ulimit nofile=unlimited -- echo ran
	assert_status 125
	refute_line_re '^ran$'
	assert_line_re '^kern: sandbox setup failed: setrlimit\(nofile, unlimited:unlimited\): Operation not permitted$'
}

@test "--apparmor fails closed with 125 and a clear reason on a host without AppArmor [rootless]" {
	[ -d /sys/kernel/security/apparmor ] && skip "this host has AppArmor; the refusal test needs one without"
	run inbox --apparmor kern-default -- echo ran
	assert_status 125
	refute_line_re '^ran$'
	assert_line_re "^kern: sandbox setup failed: cannot enter AppArmor profile 'kern-default': write /proc/self/attr/(apparmor/)?exec: .*AppArmor is not enabled here"
	run lockbox --apparmor '../x' -- echo ran
	assert_status 125
	assert_line_re "not valid"
}

@test "the workload runs filtered: Seccomp 2 and one filter, in every mode [rootless]" {
	for mode in allowlist denylist allowlist-audit; do
		KERN_SECCOMP=$mode run inbox -- awk '/^Seccomp(_filters)?:/ {print $2}' /proc/self/status
		assert_status 0
		[ "${lines[*]}" = "2 1" ]
	done
}
