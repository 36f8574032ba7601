#!/usr/bin/env bats
# security-tests.md §4 (SC-1..SC-12): the seccomp filter of isolation.md §6
# in real boxes. Each defence is shown against a control: the same probe in
# a plain user namespace, without kern's lockdown. The BPF programs are
# also checked verdict by verdict in tests/unit (FZ-8, SC-11).
load helper
load lockdown

setup() {
	kern_private_dirs
	require_helpers
}

# box_calls MODE LIST: in one box of MODE, run /kt/probe for each "name nr"
# line of LIST (stdin) and print "name status output" per call.
box_calls() {
	local mode=$1 script="" name nr
	while read -r name nr; do
		script+="o=\$(/kt/probe $nr $(harmless_args "$name")); echo \"$name \$? \$o\"; "
	done
	KERN_SECCOMP=$mode inbox -- sh -c "$script"
}

@test "SC-1: ctypes mount(0,0,0,0,0) in a box is killed with SIGSYS, exit 159 [rootless]" {
	py='import ctypes; ctypes.CDLL(None).mount(0, 0, 0, 0, 0); print("survived")'
	run nolock python3 -c "$py"
	assert_status 0
	[ "$output" = survived ]
	run inbox -- python3 -c "$py"
	assert_status 159
	refute_line_re survived
}

@test "SC-2: each of the 24 kill-set calls by raw number dies with SIGSYS, never ENOSYS, every mode [rootless]" {
	# control: unfiltered, every call returns (an error) and the probe lives
	while read -r name nr; do
		run nolock "$PROBE" "$nr" $(harmless_args "$name")
		[ "$status" -eq 0 ] || { echo "control: $name ($nr) did not return: $status $output"; return 1; }
	done < <(kill_set)
	for mode in allowlist denylist allowlist-audit; do
		run --separate-stderr box_calls "$mode" < <(kill_set)
		assert_status 0
		[ "${#lines[@]}" -eq 24 ] || { echo "$mode: ${#lines[@]} results"; echo "$output"; return 1; }
		# 159 = 128 + SIGSYS, as sh reports a child killed by it
		bad=$(grep -v '^[a-z_0-9]* 159 $' <<<"$output" || true)
		[ -z "$bad" ] || { echo "$mode: not killed: $bad"; return 1; }
	done
}

@test "SC-3: each of the 11 ENOSYS-set calls returns -1 ENOSYS and the process lives, every mode [rootless]" {
	real=0
	while read -r name nr; do
		run nolock "$PROBE" "$nr" $(harmless_args "$name")
		assert_status 0
		# where the kernel implements the call, ENOSYS can only be ours
		[[ $output == "errno ENOSYS 38" ]] || real=$((real + 1))
	done < <(enosys_set)
	echo "# $real of 11 are implemented by this kernel (control)" >&3
	[ "$real" -ge 8 ]
	for mode in allowlist denylist allowlist-audit; do
		run --separate-stderr box_calls "$mode" < <(enosys_set)
		assert_status 0
		[ "${#lines[@]}" -eq 11 ]
		bad=$(grep -v '^[a-z_0-9]* 0 errno ENOSYS 38$' <<<"$output" || true)
		[ -z "$bad" ] || { echo "$mode: $bad"; return 1; }
	done
}

@test "SC-4: syscall 998, 400 and uselib are ENOSYS in allowlist mode [rootless]" {
	uselib=134; [ "$arch" = aarch64 ] && uselib=998
	run inbox -- sh -c "/kt/probe 998; /kt/probe 400; /kt/probe $uselib"
	assert_status 0
	[ "${lines[*]}" = "errno ENOSYS 38 errno ENOSYS 38 errno ENOSYS 38" ]
}

@test "SC-4: a real call outside the allow set (statmount) is ENOSYS in allowlist, runs in denylist and allowlist-audit [rootless]" {
	run nolock "$PROBE" 457 0 0 0 0
	assert_status 0
	[[ $output != "errno ENOSYS 38" ]] || skip "this kernel has no statmount (before 6.8)"
	control=$output
	KERN_SECCOMP=allowlist run inbox -- /kt/probe 457 0 0 0 0
	[ "$output" = "errno ENOSYS 38" ]
	KERN_SECCOMP=denylist run inbox -- /kt/probe 457 0 0 0 0
	[ "$output" = "$control" ]
	KERN_SECCOMP=allowlist-audit run inbox -- /kt/probe 457 0 0 0 0
	[ "$output" = "$control" ]
}

@test "SC-5: i386 int 0x80 with eax 21 (mount) dies with SIGSYS [rootless]" {
	[ "$arch" = x86_64 ] || skip "the i386 entry point exists on x86_64 only"
	run nolock "$HELPERS/probe-int80" 20
	[ "$status" -eq 0 ] || skip "this kernel has no i386 entry point: int 0x80 faults (status $status) before seccomp sees it; the i386 arch check is verified in the BPF unit test"
	run inbox -- /kt/probe-int80 21
	assert_status 159
}

@test "SC-6: a system call with the x32 bit 0x40000000 dies with SIGSYS [rootless]" {
	[ "$arch" = x86_64 ] || skip "x32 exists on x86_64 only"
	run nolock "$HELPERS/probe-x32" 39
	assert_status 0
	for mode in allowlist denylist allowlist-audit; do
		KERN_SECCOMP=$mode run inbox -- /kt/probe-x32 39
		assert_status 159
	done
}

@test "SC-7: clone with each CLONE_NEW* flag dies with SIGSYS, also among other bits [rootless]" {
	flags="0x00020000 0x02000000 0x04000000 0x08000000 0x10000000 0x20000000 0x40000000"
	for flag in $flags; do
		run nolock "$HELPERS/probe-clone" "$flag"
		[ "$output" = ok ] || { echo "control: clone $flag: $output"; return 1; }
	done
	for mode in allowlist denylist; do
		script='exec 2>/dev/null; for f in '"$flags"'; do /kt/probe-clone $f; echo "$f $?"; /kt/probe-clone $((f | 0x100000100)); echo "$f+ $?"; done'
		KERN_SECCOMP=$mode run inbox -- sh -c "$script"
		assert_status 0
		[ "$(grep -c ' 159$' <<<"$output")" -eq 14 ] || { echo "$mode: $output"; return 1; }
	done
	# bits above 31 are not namespace flags: the kernel ignores them
	run inbox -- /kt/probe-clone 0x7e02000000000000
	assert_status 0
	[ "$output" = ok ]
}

@test "SC-7: fork, threads, multiprocessing and subprocess work in a box; clone3 falls back [rootless]" {
	run inbox -- python3 -c '
import os, threading, multiprocessing, subprocess
pid = os.fork()
if pid == 0:
    os._exit(7)
_, st = os.waitpid(pid, 0)
assert os.WEXITSTATUS(st) == 7
out = []
t = threading.Thread(target=out.append, args=("thread",)); t.start(); t.join()
with multiprocessing.Pool(2) as p:
    r = p.map(abs, [-1, -2, -3])
print(out[0], r, subprocess.run(["true"]).returncode)'
	assert_status 0
	[ "$output" = "thread [1, 2, 3] 0" ]
}

@test "SC-8: socket(AF_VSOCK) is EAFNOSUPPORT, on the low 32 bits of the domain [rootless]" {
	run nolock "$HELPERS/probe-vsock"
	[ "$output" = ok ] || echo "# control: this kernel answers AF_VSOCK with '$output' by itself" >&3
	for mode in allowlist denylist allowlist-audit; do
		KERN_SECCOMP=$mode run inbox -- sh -c '/kt/probe-vsock 40; /kt/probe-vsock 0x100000028; /kt/probe-vsock 0xffffffff00000028; /kt/probe-vsock 1'
		assert_status 0
		[ "${lines[*]}" = "errno EAFNOSUPPORT 97 errno EAFNOSUPPORT 97 errno EAFNOSUPPORT 97 ok" ] ||
			{ echo "$mode: $output"; return 1; }
	done
}

@test "SC-9: unshare -r and mount -t tmpfs n /proc inside a box die with 159 [rootless]" {
	run nolock unshare -r true
	assert_status 0
	run unshare -rm mount -t tmpfs n /proc	# control: a mount namespace of one's own allows it
	assert_status 0
	run inbox -- unshare -r true
	assert_status 159
	run inbox -- mount -t tmpfs n /proc
	assert_status 159
}

@test "SC-10: KERN_SECCOMP=bogus is exit 1; empty is allowlist; denylist and allowlist-audit are accepted [rootless]" {
	KERN_SECCOMP=bogus run inbox -- true
	assert_status 1
	assert_line_re '^error: box: KERN_SECCOMP=bogus is not a seccomp mode$'
	KERN_SECCOMP= run inbox --show-config -- true
	assert_status 0
	assert_line_re '^seccomp: allowlist$'
	assert_line_re '^seccomp_denied_syscalls: 35$'
	for mode in denylist allowlist-audit; do
		KERN_SECCOMP=$mode run inbox --show-config -- true
		assert_line_re "^seccomp: $mode\$"
		KERN_SECCOMP=$mode run inbox -- awk '/^Seccomp:/ {print $2}' /proc/self/status
		assert_status 0
		[ "$output" = 2 ]
	done
	# an environment variable never weakens an explicit hardening flag
	KERN_SECCOMP=denylist run inbox --security-profile untrusted -- true
	assert_status 1
}

@test "SC-10: kern exec reuses the box's recorded seccomp mode [rootless]" {
	require_built exec
	name=sc10x-$$
	KERN_SECCOMP=denylist "$KERN" box "$name" -d --image host -q -v "$HELPERS:/kt:ro" -- sleep 30
	run "$KERN" exec "$name" -- /kt/probe 457 0 0 0 0
	"$KERN" stop "$name" >/dev/null 2>&1 || true
	assert_status 0
	[ "$output" != "errno ENOSYS 38" ]
}

@test "SC-12: no code outside kern runs in a box before the filter (exec guard on kern box) [rootless]" {
	run "$HELPERS/exec-guard" --box-only "$KERN" -- "$KERN" box "sc12-$$" --image host -q -- sh -c 'exec /bin/true'
	assert_status 0
	refute_line_re VIOLATION
}

@test "SC-12: the guard catches an exec of non-kern code placed before the filter install in PID 1 [rootless]" {
	# kern-canary is kern built with KERN_SC12_CANARY in lib/lockdown/lockdown.c: PID 1
	# runs /bin/true after the capability drop, before no_new_privs+filter.
	run "$HELPERS/exec-guard" --box-only "$HELPERS/kern-canary" -- "$HELPERS/kern-canary" box "sc12c-$$" --image host -q -- true
	assert_status 99
	assert_line_re 'exec-guard: VIOLATION: pid [0-9]+ executed .*/true with no seccomp filter'
}

@test "SC-12: the same guard on the host-side driver, clean and with the canary [rootless]" {
	unshare=$(command -v unshare)
	run "$HELPERS/exec-guard" --allow "$unshare" "$LOCKRUN" -- unshare -r "$LOCKRUN" -- sh -c 'exec /bin/true'
	assert_status 0
	refute_line_re VIOLATION
	run "$HELPERS/exec-guard" --allow "$unshare" "$HELPERS/lockdown-run-canary" -- unshare -r "$HELPERS/lockdown-run-canary" -- /bin/true
	assert_status 99
	assert_line_re 'exec-guard: VIOLATION: pid [0-9]+ executed .*/true with no seccomp filter'
}
