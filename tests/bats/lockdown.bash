# Shared by seccomp.bats and caps.bats. The attack matrix runs in real
# boxes (`kern box NAME --image host`, the probes of tests/helpers bound
# read-only at /kt). Controls run the same probe in a plain user namespace
# without the lockdown; a few unit-level tests use the host-side driver
# build/helpers/lockdown-run (lib/lockdown/lockdown.c alone, then exec).

HELPERS=$TREE/build/helpers
LOCKRUN=$HELPERS/lockdown-run
PROBE=$HELPERS/probe

require_helpers() {
	[ -x "$LOCKRUN" ] && [ -x "$PROBE" ] || skip "test helpers not built (make check builds them)"
}

# lockbox [lockdown-run options] -- CMD: CMD locked down as in a box: in a
# fresh user namespace (so the capability sets are the box's, as root and
# rootless alike), then lockdown_apply(), then exec.
lockbox() {
	unshare -r "$LOCKRUN" "$@"
}

# nolock CMD: the same namespace without the lockdown, the control.
nolock() {
	unshare -r "$@"
}

# kern SUBCOMMAND exists in this build? (a placeholder says "not built")
require_built() {
	local out
	out=$("$KERN" "$1" kern-no-such-box -- true 2>&1) || true
	if grep -q 'not built' <<<"$out"; then
		skip "kern $1 is not built on this branch yet"
	fi
}

# inbox [kern box flags] -- CMD...: CMD in a fresh box of the host image,
# quiet, with the probes at /kt. Mode via KERN_SECCOMP in the caller.
BOXN=0
inbox() {
	BOXN=$((BOXN + 1))
	"$KERN" box "lk$BATS_TEST_NUMBER-$$-$BOXN" --image host -q -v "$HELPERS:/kt:ro" "$@"
}

arch=$(uname -m)

# isolation.md §6.1 numbers (the 35 always-denied syscalls) for this
# architecture: "name nr" lines.
kill_set() {
	if [ "$arch" = aarch64 ]; then
		echo "ptrace 117 process_vm_readv 270 process_vm_writev 271 kexec_load 104 kexec_file_load 294
init_module 105 finit_module 273 delete_module 106 reboot 142 swapon 224 swapoff 225 open_tree 428
move_mount 429 fsopen 430 fsconfig 431 fsmount 432 fspick 433 mount_setattr 442 bpf 280 unshare 97
setns 268 mount 40 umount2 39 pivot_root 41"
	else
		echo "ptrace 101 process_vm_readv 310 process_vm_writev 311 kexec_load 246 kexec_file_load 320
init_module 175 finit_module 313 delete_module 176 reboot 169 swapon 167 swapoff 168 open_tree 428
move_mount 429 fsopen 430 fsconfig 431 fsmount 432 fspick 433 mount_setattr 442 bpf 321 unshare 272
setns 308 mount 165 umount2 166 pivot_root 155"
	fi | xargs -n2
}
enosys_set() {
	if [ "$arch" = aarch64 ]; then
		echo "clone3 435 io_uring_setup 425 io_uring_enter 426 io_uring_register 427 userfaultfd 282
perf_event_open 241 add_key 217 request_key 218 keyctl 219 syslog 116 open_by_handle_at 265"
	else
		echo "clone3 435 io_uring_setup 425 io_uring_enter 426 io_uring_register 427 userfaultfd 323
perf_event_open 298 add_key 248 request_key 249 keyctl 250 syslog 103 open_by_handle_at 304"
	fi | xargs -n2
}

# Arguments that make each call fail harmlessly should it ever run
# unfiltered (the controls run it in a user namespace, without privilege
# over the host): bad descriptors, NULL pointers, impossible requests.
harmless_args() {
	case $1 in
	ptrace) echo "-1" ;;
	unshare) echo "0" ;;
	setns | finit_module | fsconfig | fsmount | io_uring_enter | io_uring_register | open_by_handle_at) echo "-1" ;;
	kexec_file_load) echo "-1 -1 0 0 0" ;;
	open_tree | fspick | move_mount | mount_setattr) echo "-1 0 0" ;;
	userfaultfd) echo "-1" ;;
	keyctl) echo "-1" ;;
	syslog) echo "10" ;;
	*) echo "" ;;
	esac
}

# The status line of /proc/self/status as the locked-down process sees it.
status_of() { # FIELD, then lockbox options -- (optional)
	local field=$1; shift
	lockbox "$@" -- grep "^$field:" /proc/self/status | awk '{print $2}'
}
