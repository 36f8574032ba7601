#!/usr/bin/env bats
# kern box: deadline, signals, supervisor death, concurrency, descriptors
# and stdio (security-tests.md sections 5 DL-*, 6, 7).
load helper

setup() { kern_private_dirs; }

# Processes whose command line carries this test's marker.
marker_procs() { pgrep -f "$1" | grep -v "^$$\$" || true; }

# deadline_box NAME ARGS...: kern box NAME ARGS with its outcome bytes in
# $o; sets status, and ms to the milliseconds from the workload's exec to
# kern's exit. The deadline is armed as PID 1 starts (isolation.md §2.5),
# so it is timed from the exec, which the alive pipe marks with its EOF
# (box-cli.md §5), and not from before kern ran: on a busy machine (make
# check runs three suites at once) a start can wait its turn for a while,
# which is no part of the deadline.
deadline_box() {
	local fifo=$BATS_TEST_TMPDIR/alive stamp=$BATS_TEST_TMPDIR/exec-stamp reader end
	rm -f "$fifo" "$stamp"
	mkfifo "$fifo"
	{ cat >/dev/null; date +%s%N >"$stamp"; } <"$fifo" &
	reader=$!
	# The redirection on kern's command alone: no other process holds the
	# pipe's write end, so its EOF is the workload's exec.
	status=0
	KERN_STARTED_FD=3 KERN_ALIVE_FD=4 "$KERN" box "$@" 3>"$o" 4>"$fifo" || status=$?
	end=$(date +%s%N)
	wait "$reader"
	ms=$(( (end - $(cat "$stamp")) / 1000000 ))
}

@test "DL-1: --timeout 2 ends sleep with 143 within 2.5 s, a SIGTERM trap with 137 within 4.5 s [rootless]" {
	o=$BATS_TEST_TMPDIR/o
	deadline_box dl1 --image host --timeout 2 -- sleep 100
	[ "$status" = 143 ]
	[ "$ms" -lt 2500 ]
	[ "$(outcome "$o")" = "1 0 0 15" ]
	deadline_box dl1b --image host --timeout 2 -- sh -c 'trap "" TERM; trap "echo got" TERM; while :; do :; done'
	[ "$status" = 137 ]
	[ "$ms" -lt 4500 ]
	[ "$ms" -ge 3500 ]
	[ "$(outcome "$o")" = "1 0 0 9" ]
	no_leftovers dl1b
}

@test "the workload runs on the caller's CPUs [rootless]" {
	cpus() { awk '/^Cpus_allowed_list:/ { print $2 }'; }
	mine=$(cpus </proc/self/status)
	run "$KERN" box aff --image host -- cat /proc/self/status
	assert_status 0
	[ "$(cpus <<<"$output")" = "$mine" ]
	[ "$(nproc)" -ge 2 ] || skip "one CPU: no narrower set to ask for"
	run taskset -c 1 "$KERN" box aff --image host -- cat /proc/self/status
	assert_status 0
	[ "$(cpus <<<"$output")" = 1 ]
}

@test "DL-4: killpg(SIGKILL) of kern stops a background writer within 1.5 s [rootless]" {
	f=$BATS_TEST_TMPDIR/ws; mkdir -p "$f"; writable_by_box "$f"
	setsid "$KERN" box dl4 --image host -v "$f:/w" -- sh -c '(while :; do date +%s%N >> /w/tick; done) & sleep 100' &
	wait_for "$f/tick" . 5
	pgid=$(ps -o pgid= -p $! | tr -d ' ')
	kill -KILL -- "-$pgid"
	sleep 1.5
	a=$(wc -l <"$f/tick"); sleep 0.5; b=$(wc -l <"$f/tick")
	[ "$a" -eq "$b" ]
}

@test "DL-5: a workload that clears its parent-death signal still dies with the supervisor [rootless]" {
	f=$BATS_TEST_TMPDIR/ws; mkdir -p "$f"; writable_by_box "$f"
	"$KERN" box dl5 --image host -v "$f:/w" -- python3 -c '
import ctypes, os, time
ctypes.CDLL(None).prctl(1, 0)   # PR_SET_PDEATHSIG 0
open("/w/ready", "w").close()
while True:
    open("/w/tick", "a").write("x"); time.sleep(0.01)' &
	kpid=$!
	for _ in $(seq 100); do [ -e "$f/ready" ] && break; sleep 0.05; done
	[ -e "$f/ready" ]
	kill -KILL $kpid
	sleep 1.5
	a=$(stat -c %s "$f/tick"); sleep 0.5; b=$(stat -c %s "$f/tick")
	[ "$a" -eq "$b" ]
}

# The way around DL-5: reach into init (its memory, or its descriptors)
# and clear init's own parent-death signal. init is non-dumpable, so every
# door is shut; the workload's own child, the positive control, stays open.
@test "the workload cannot reach into init: /proc/1/mem, /proc/1/fd, /proc/1/environ, pidfd_getfd all refused [rootless]" {
	run "$KERN" box reach --image host -- python3 -c '
import ctypes, errno, os, subprocess, sys
def tried(what, fn):
    try:
        fn(); print(what, "open")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
def getfd(pid):
    pfd = os.pidfd_open(pid)
    fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
    for target in range(64):
        fd = libc.syscall(438, pfd, target, 0)    # pidfd_getfd
        if fd >= 0:
            return
        err = ctypes.get_errno()
        if err != errno.EBADF:
            raise OSError(err, os.strerror(err))
    raise OSError(errno.EBADF, "no descriptor")
child = subprocess.Popen(["sleep", "30"])
for pid, who in ((1, "init"), (child.pid, "child")):
    tried(who + " mem", lambda: os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR)))
    tried(who + " fd", lambda: os.readlink("/proc/%d/fd/0" % pid))
    tried(who + " environ", lambda: open("/proc/%d/environ" % pid).read())
    tried(who + " getfd", lambda: getfd(pid))
child.kill()'
	assert_status 0
	for door in mem fd environ; do
		assert_line_re "^init $door EACCES$"
		assert_line_re "^child $door open$"
	done
	assert_line_re '^init getfd EPERM$'
	assert_line_re '^child getfd open$'
}

@test "DL-6: one SIGTERM is forwarded and the workload's code reported; a second ends it at once [rootless]" {
	"$KERN" box dl6 --image host -- sh -c 'trap "echo forwarded; exit 7" TERM; while :; do sleep 0.05; done' >"$BATS_TEST_TMPDIR/out" &
	kpid=$!
	sleep 0.7
	kill -TERM $kpid
	rc=0; wait $kpid || rc=$?
	[ "$rc" -eq 7 ]
	grep -qx forwarded "$BATS_TEST_TMPDIR/out"
	"$KERN" box dl6b --image host -- sh -c 'trap "" TERM; while :; do sleep 0.05; done' &
	kpid=$!
	sleep 0.7
	kill -TERM $kpid; sleep 0.3
	kill -0 $kpid
	s=$(date +%s%N)
	kill -TERM $kpid
	rc=0; wait $kpid || rc=$?
	[ "$rc" -eq 143 ]
	[ $(( ($(date +%s%N) - s) / 1000000 )) -lt 1000 ]
	no_leftovers dl6b
}

# The start's window: PID 1 of a pid namespace never hears a signal it has
# no handler for, so a stop signal (or the deadline's) that comes while
# PID 1 still builds the root waits in the supervisor until PID 1 can pass
# it on. The hook holds PID 1 past its pivot_root (the supervisor is in its
# main loop by then in a rootless box; as root it may still be preparing,
# which ends the start instead): either way the box ends, never waiting for
# a signal it lost.
pause_at() {
	local phase=$1 name=$2
	shift 2
	go=$BATS_TEST_TMPDIR/go err=$BATS_TEST_TMPDIR/err
	KERN_TEST_PAUSE=$phase KERN_TEST_RESUME=$go "$KERN_T" box "$name" --image host "$@" \
		-v "$BATS_TEST_TMPDIR:$BATS_TEST_TMPDIR" -- sleep 30 2>"$err" &
	kpid=$!
	wait_for "$err" "paused at $phase" 10
}

pause_after_pivot() {
	pause_at pid1-after-pivot "$@"
}

ended_within() {
	local i
	for i in $(seq 1 $(($1 * 20))); do
		kill -0 "$kpid" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "still running $1 s later: the signal was lost"; kill -KILL "$kpid"; return 1
}

# The paused box ends within 5 s with CODE and is gone; with LINE, kern
# said `kern: sandbox setup failed: LINE`.
box_ended() {
	local code=$1 name=$2 line=${3:-}
	ended_within 5 || return 1
	rc=0; wait $kpid || rc=$?
	[ "$rc" -eq "$code" ] || { echo "rc $rc"; cat "$err"; return 1; }
	[ -z "$line" ] || grep -qx "kern: sandbox setup failed: $line" "$err" || { cat "$err"; return 1; }
	no_leftovers "$name"
}

@test "DL-6: a SIGTERM that comes while PID 1 builds the root still reaches the workload [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	pause_after_pivot dl6early
	kill -TERM $kpid
	sleep 0.2
	touch "$go"
	box_ended 143 dl6early
}

@test "DL-6: a second SIGTERM before the workload started ends the start, and says so [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	pause_after_pivot dl6twice
	kill -TERM $kpid
	sleep 0.2
	# As root the first one may have ended the start already.
	kill -TERM $kpid 2>/dev/null || true
	box_ended 143 dl6twice "stopped by SIGTERM before the box started"
}

@test "DL-6: a SIGTERM while the supervisor waits for PID 1's first word after its id maps ends the start [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	# PID 1 held right after its id maps arrived: a supervisor whose PID 1
	# has no idmapped mounts to ask for (rootless, root's --map-host-root,
	# a box without a user namespace) sleeps until PID 1 answers
	# (pid1sync.h), root's default one serves those mounts; either wait
	# must hear the signal, or the start hangs. In the no-userns pass the
	# default box is already of the first kind (and --map-host-root is
	# refused there).
	local flags runs=("")
	[ "$(id -u)" != 0 ] || [ -n "${KERN_TEST_CHROOT:-}" ] || runs+=(--map-host-root)
	for flags in "${runs[@]}"; do
		pause_at pid1-mapped dl6mapped $flags
		kill -TERM $kpid
		box_ended 143 dl6mapped "stopped by SIGTERM before the box started" || { echo "flags: '$flags'"; return 1; }
	done
}

@test "DL-6: kern stop while the box still starts reaches the workload, and waits its grace for it [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	# Held where the record has PID 1 but init has not run the workload:
	# kern stop signals PID 1, which keeps the signal for init (a pid
	# namespace's init would drop it otherwise), and waits for the
	# workload it may reach instead of killing the box after 0.2 s.
	pause_at pid1-recorded stopearly
	s=$(date +%s%N)
	"$KERN" stop -t 5 stopearly &
	spid=$!
	sleep 0.5
	touch "$go"
	box_ended 143 stopearly
	wait $spid
	[ $(( ($(date +%s%N) - s) / 1000000 )) -lt 4000 ]
}

@test "DL-6: a signal that meets PID 1's end of the idmapped-mount service in one poll reaches the workload: the start was done" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	# Root's boxes only: the supervisor serves PID 1's idmapped mounts for a
	# subordinate-id root, and off a v2 root makes the box cgroup meanwhile
	# (idle-done: that cgroup was handed over, PID 1 had asked for nothing
	# more at that moment).
	require_root
	[ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] ||
		skip "cgroup v2 on top: root's box cgroup is made before PID 1, not while it builds the root"
	# The supervisor is held at idle-done. Usually PID 1 has all it needs,
	# ends the service and starts the workload alone; then the SIGQUIT and
	# that end meet in the supervisor's next poll, and the workload must
	# get the signal (7). Sometimes PID 1 still asks for a mount after the
	# supervisor looked: then the box never started and 131 is right. Each
	# start is checked against whether its workload ran; one must be of
	# the first kind. No -v: a bind is asked for late, always of the
	# second kind.
	go=$BATS_TEST_TMPDIR/go err=$BATS_TEST_TMPDIR/err out=$BATS_TEST_TMPDIR/out
	local met=0 try
	for try in 1 2 3 4 5 6 7 8; do
		rm -f "$go" "$out"
		KERN_TEST_PAUSE=idle-done KERN_TEST_RESUME=$go "$KERN_T" box quitmeet --image host -- \
			sh -c 'trap "exit 7" QUIT; echo up; while :; do sleep 0.05; done' >"$out" 2>"$err" &
		kpid=$!
		wait_for "$err" "paused at idle-done" 10
		local started=0
		wait_for "$out" "^up$" 3 >/dev/null && started=1
		kill -QUIT $kpid
		touch "$go"
		# Judged once the box is gone: a slow PID 1 may still have
		# started the workload after the wait above.
		ended_within 5 || return 1
		rc=0; wait $kpid || rc=$?
		if grep -qx up "$out"; then
			# The trap was set: the signal must have reached it.
			[ "$rc" -eq 7 ] && ! grep -q "before the box started" "$err" ||
				{ echo "try $try: rc $rc though the workload ran"; cat "$err"; return 1; }
		else
			# Stopped before the start, or the workload killed by the
			# signal before its trap was set: 128 + 3 either way.
			[ "$rc" -eq 131 ] || { echo "try $try: rc $rc"; cat "$err"; return 1; }
		fi
		no_leftovers quitmeet
		[ "$started" = 0 ] || { met=1; break; }
	done
	[ "$met" = 1 ] || { echo "in 8 starts PID 1 never finished while the supervisor was held"; return 1; }
}

# MASK CMD...: CMD run with the signals MASK blocked (MASK_EXEC, helper.bash).
with_mask() {
	/usr/bin/python3 -c "$MASK_EXEC" "$@"
}

@test "the workload starts with the caller's signal mask, whatever kern blocks meanwhile (with and without -t) [rootless]" {
	run with_mask "" "$KERN" box mask0 --image host -- grep '^SigBlk:' /proc/self/status
	[ "$status" -eq 0 ]
	grep -Eqx 'SigBlk:[[:space:]]+0+' <<<"$output" || { echo "$output"; return 1; }
	# SIGUSR1 (10) and SIGWINCH (28): bits 9 and 27. USR1 is one init
	# forwards and keeps blocked while the box starts: the workload still
	# gets it blocked because the caller had it so, and nothing else.
	run with_mask SIGUSR1,SIGWINCH "$KERN" box mask1 --image host -- grep '^SigBlk:' /proc/self/status
	[ "$status" -eq 0 ]
	grep -Eqx 'SigBlk:[[:space:]]+0*8000200' <<<"$output" || { echo "$output"; return 1; }
	run "$TREE/tests/helpers/on-pty" -- /usr/bin/python3 -c "$MASK_EXEC" SIGUSR2 \
		"$KERN" box mask2 -q -t --image host -- grep '^SigBlk:' /proc/self/status
	# SIGUSR2 (12): bit 11.
	grep -Eq 'SigBlk:[[:space:]]+0*800$' <<<"$output" || { echo "$output"; return 1; }
}

@test "DL-1: a --timeout that passes while PID 1 builds the root ends the start with 125, and says so [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	pause_after_pivot dl1early --timeout 1
	# The deadline's SIGKILL stage comes 0.2 s after its SIGTERM; PID 1 is
	# still held here.
	box_ended 125 dl1early "the --timeout deadline (1 s) passed before the box started"
}

@test "stdin stays a live pipe for the box's life [rootless]" {
	coproc K { "$KERN" box pipe1 --image host -- python3 -u -c '
import sys
for line in sys.stdin:
    print("echo:" + line.strip(), flush=True)
    if line.strip() == "quit": break'; }
	echo hello >&"${K[1]}"
	read -r -t 5 got <&"${K[0]}"
	[ "$got" = echo:hello ]
	echo again >&"${K[1]}"
	read -r -t 5 got <&"${K[0]}"
	[ "$got" = echo:again ]
	echo quit >&"${K[1]}"
	wait $K_PID
}

@test "stdio is passed byte-exact [rootless]" {
	head -c 300000 /dev/urandom >"$BATS_TEST_TMPDIR/in"
	"$KERN" box bytes --image host -- cat <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
}

# The host's mount points, sorted. kern as an unprivileged caller cannot
# mount in the host's namespace at all, but root's suites, which make
# check runs beside this one, can: as another user, the chroots of
# nouserns.bats and the test directories of other bats runs (oci.bats'
# overlay and namespace binds) are left out. Root's run is the only one
# that mounts on the host, and it runs its tests one at a time.
host_mount_points() {
	if is_root; then
		cut -d' ' -f5 /proc/self/mountinfo | sort
	else
		cut -d' ' -f5 /proc/self/mountinfo | sort |
			awk -v own="$BATS_RUN_TMPDIR" 'index($0, "/tmp/kern-chroot.") != 1 &&
				(index($0, "/tmp/bats-run-") != 1 || index($0, own) == 1)'
	fi
}

# KILL-1, -2, -3, -5, -7 (security-tests.md §6, SIGKILL of the supervisor at
# every phase): nothing may remain. KILL-4 and KILL-6 have tests of their own.
# The caller runs this as `kill_at_phase P || ...`, which turns errexit off
# inside it: every check returns 1 itself.
kill_at_phase() {
	# The name is this run's alone: make check runs this file as another
	# user and in the no-userns pass at the same time, and the cgroup
	# check below looks through every hierarchy by name.
	local phase=$1 name=kill-$1-$$ o=$BATS_TEST_TMPDIR/o err=$BATS_TEST_TMPDIR/err cmd
	before=$(host_mount_points)
	# A duration no other run uses, so the check below sees only this box.
	dur=300.$$$RANDOM
	cmd=(sleep "$dur")
	# Teardown comes only once the workload has ended.
	[ "$phase" = teardown ] && cmd=(true)
	: >"$err"
	KERN_TEST_PAUSE=$phase KERN_STARTED_FD=3 "$KERN_T" box "$name" --image host -- "${cmd[@]}" 3>"$o" 2>"$err" &
	kpid=$!
	if [ "$phase" = running ]; then
		# Running means the workload exists (a loaded host starts it late).
		for _ in $(seq 200); do pgrep -fx "sleep $dur" >/dev/null && break; sleep 0.05; done
		pgrep -fx "sleep $dur" >/dev/null || { echo "the workload never ran"; cat "$err"; return 1; }
	else
		wait_for "$err" "paused at $phase" 10 || return 1
	fi
	kill -KILL $kpid
	wait $kpid 2>/dev/null || true
	# KILL-7: the client's blocking read of the outcome fd returns (EOF).
	timeout 5 cat "$o" >/dev/null || { echo "the outcome fd stayed open"; return 1; }
	# KILL-5: gone from ps at once, before any recover.
	! "$KERN" ps -q 2>/dev/null | grep -qx "$name" || { echo "still listed by kern ps"; return 1; }
	# KILL-1: the whole box goes down within 1.5 s (isolation.md §1, process
	# model: the box dies with its supervisor).
	for _ in $(seq 30); do pgrep -fx "sleep $dur" >/dev/null || break; sleep 0.05; done
	[ -z "$(pgrep -fx "sleep $dur" || true)" ] || { echo "process left"; pgrep -af "sleep $dur"; return 1; }
	# Gone from /proc is not yet out of the cgroups: a v1 box cgroup can
	# stay populated a moment longer (dying tasks, one level down:
	# cgroup/tree.c). Wait for every cgroup.procs of the box's trees to
	# empty, or recover's sweep meets a box still dying (rmdir: EBUSY) and
	# rightly leaves it.
	local x
	for _ in $(seq 500); do
		x=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "kern-box-$name-*" \
			-exec find {} -name cgroup.procs -exec cat {} + \; 2>/dev/null | head -1)
		[ -z "$x" ] && break
		sleep 0.01
	done
	[ -z "$x" ] || { echo "box cgroups still populated: $x"; return 1; }
	"$KERN" recover >/dev/null 2>&1 || true
	# KILL-2: host mountinfo unchanged.
	[ "$before" = "$(host_mount_points)" ] ||
		{ echo "host mounts changed:"; diff <(echo "$before") <(host_mount_points); return 1; }
	# KILL-3: no cgroup directory.
	! find /sys/fs/cgroup -maxdepth 4 -name "kern-box-$name-*" 2>/dev/null | grep -q . ||
		{ echo "cgroup left"; find /sys/fs/cgroup -maxdepth 4 -name "kern-box-$name-*"; return 1; }
}

@test "KILL-1, KILL-2, KILL-3, KILL-5, KILL-7: SIGKILL of the supervisor at every phase leaves nothing behind [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	for phase in parse claim cgroup unshare pid1-before-pivot pid1-after-pivot running teardown; do
		kill_at_phase "$phase" || { echo "phase $phase"; return 1; }
	done
}

@test "KILL-4: kern recover removes the scratch and record a killed supervisor left [rootless]" {
	err=$BATS_TEST_TMPDIR/err
	KERN_TEST_PAUSE=teardown "$KERN_T" box kill4 --image host -- true 2>"$err" &
	kpid=$!
	wait_for "$err" "paused at teardown" 10
	kill -KILL $kpid; wait $kpid 2>/dev/null || true
	rt=$(runtime_dir)
	ls -d "$rt/scratch/kill4-"*
	"$KERN" recover
	no_leftovers kill4
}

@test "KILL-4: kern recover removes the temporary record a supervisor killed mid-write left, never a live writer's [rootless]" {
	# A supervisor SIGKILLed between writing instances/.<name>.<pid>.tmp
	# and renaming it into place leaves the file (bench/soak saw 3 in 100
	# kills); two stand-ins, one whose writer is alive. Whatever an earlier
	# run left of this user's (a box cgroup of a killed supervisor) is
	# recovered first, so that the count below is this test's alone.
	"$KERN" recover >/dev/null 2>&1
	"$KERN" box tmprec --image host -- true
	rt=$(runtime_dir)
	sleep 300 &
	live=$!
	sh -c true &
	dead=$!
	wait $dead
	printf 'name\ttmprec\n' >"$rt/instances/.tmprec.$live.tmp"
	printf 'name\ttmprec\n' >"$rt/instances/.tmprec.$dead.tmp"
	run --separate-stderr "$KERN" recover
	assert_status 0
	[ "$stderr" = "kern: note: recover: removed 1 dead record, 0 scratch directories, 0 cgroups" ] || { echo "$stderr"; false; }
	[ -e "$rt/instances/.tmprec.$live.tmp" ]
	[ ! -e "$rt/instances/.tmprec.$dead.tmp" ]
	kill $live
	wait $live || true
	"$KERN" recover
	[ -z "$(ls -A "$rt/instances")" ] || { ls -la "$rt/instances"; false; }
}

@test "the test build's phase hook is absent from the release build [rootless]" {
	! grep -q "paused at" "$KERN" || false
	run env KERN_TEST_PAUSE=claim "$KERN" box hook --image host -- true
	assert_status 0
}

# 80 descriptors in flight from this user (queued on a socket nobody
# reads) for SECONDS, in the background ($hpid), once they are.
hold_in_flight() {
	local held=$BATS_TEST_TMPDIR/held
	rm -f "$held"
	/usr/bin/python3 -c '
import os, socket, sys, time
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(80)]
for i in range(0, 80, 8):
    socket.send_fds(a, [b"x"], fds[i:i + 8])
for fd in fds:
    os.close(fd)
open(sys.argv[1], "w").close()
time.sleep(float(sys.argv[2]))
b.close()' "$held" "$1" &
	hpid=$!
	for _ in $(seq 1 100); do [ -e "$held" ] && break; sleep 0.05; done
	[ -e "$held" ]
}

@test "CONC-1: a start waits out its user's limit on descriptors in flight instead of failing [rootless]" {
	# The kernel counts descriptors sent and not yet received per user,
	# against the sender's RLIMIT_NOFILE, and exempts only CAP_SYS_RESOURCE
	# in the first user namespace: root's boxes run PID 1 as a subordinate
	# id no other process here shares, or without a user namespace as root.
	[ "${KERN_TEST_ROOTLESS:-}" = 1 ] || skip "as root a box's PID 1 is a subordinate id no process here shares, or (no user namespace) root, which the limit exempts"
	# 80 in flight for 1 s against the box's soft limit of 64: PID 1's
	# hand-over of its namespaces is refused (ETOOMANYREFS) until then.
	hold_in_flight 1
	run bash -c 'ulimit -S -n 64 && exec "$0" box inflight --image host -- echo started' "$KERN"
	wait "$hpid"
	echo "$output"
	assert_status 0
	assert_line_re "^started$"
	no_leftovers inflight
	# Held longer than kern waits (5 s): the start fails, saying why. With
	# cgroups delegated (make check's test user) the first hand-over that
	# waits is the supervisor's of the box cgroup to PID 1; without, PID 1's
	# of its namespaces.
	hold_in_flight 8
	run bash -c 'ulimit -S -n 64 && exec "$0" box inflight2 --image host -- echo started' "$KERN"
	kill "$hpid"; wait "$hpid" || true
	echo "$output"
	assert_status 125
	assert_line_re "^kern: sandbox setup failed: cannot hand (the box's namespaces to the supervisor|the box cgroup to PID 1): sendmsg: this user's descriptors in flight stayed over its open-file limit \(ulimit -n 64\) for 5 s \(too many boxes starting at once for that limit\)$"
	no_leftovers inflight2
}

@test "a setup failure of PID 1's own is the line said, 40 starts at once, while the supervisor hands it the box cgroup [rootless]" {
	# PID 1 refuses the workdir and ends while the supervisor, beside it,
	# makes the v1 box cgroup and sends it over: that send's broken pipe
	# must leave PID 1's reason as the one line (it replaced it in 14 of 40).
	for i in $(seq 1 40); do
		"$KERN" box pid1why$i --image host --workdir /proc/self/fd/7 -- true 7</dev/null \
			2>"$BATS_TEST_TMPDIR/e$i" &
	done
	wait || true
	# (Without a delegated cgroup the caps warning comes first; the text
	# after the path is the C library's, glibc's or musl's, for ELOOP.)
	for i in $(seq 1 40); do
		said=$(grep -v '^kern: warning: memory and pids caps are NOT enforced' "$BATS_TEST_TMPDIR/e$i")
		[[ $said == "kern: sandbox setup failed: workdir /proc/self/fd/7: "* && $said != *$'\n'* ]] ||
			{ echo "box pid1why$i said:"; cat "$BATS_TEST_TMPDIR/e$i"; return 1; }
	done
}

@test "CONC-1: 200 concurrent boxes all succeed and leave a consistent registry [rootless]" {
	pids=()
	for i in $(seq 1 200); do
		"$KERN" box c$i --image host -- sh -c "exit $((i % 50))" 2>"$BATS_TEST_TMPDIR/e$i" &
		pids+=($!)
	done
	bad=0
	for i in $(seq 1 200); do
		rc=0; wait "${pids[$((i - 1))]}" || rc=$?
		[ "$rc" -eq $((i % 50)) ] || { echo "box c$i: $rc"; cat "$BATS_TEST_TMPDIR/e$i"; bad=1; }
	done
	[ "$bad" -eq 0 ]
	rt=$(runtime_dir)
	! ls "$rt/instances" | grep -Eq '^c[0-9]+$' || false
	! ls "$rt/scratch" | grep -Eq '^c[0-9]+-' || false
	[ -z "$("$KERN" ps -q)" ]
}

@test "CONC-2: 128 concurrent boxes on one workspace write distinct files [rootless]" {
	ws=$BATS_TEST_TMPDIR/ws; mkdir -p "$ws"; writable_by_box "$ws"
	for i in $(seq 1 128); do
		"$KERN" box w$i --image host -v "$ws:/workspace" -- sh -c "echo $i > /workspace/f$i" &
	done
	wait
	[ "$(ls "$ws" | wc -l)" -eq 128 ]
	for i in $(seq 1 128); do [ "$(cat "$ws/f$i")" = "$i" ]; done
}

@test "FD-1/FD-2: the box sees only 0 1 2, even with an extra inherited descriptor [rootless]" {
	echo hostdata >"$BATS_TEST_TMPDIR/extra"
	run env KERN_STARTED_FD=3 KERN_ALIVE_FD=4 "$KERN" box fd1 --image host -- ls /proc/self/fd 3>"$BATS_TEST_TMPDIR/o" 4>"$BATS_TEST_TMPDIR/a" 8<"$BATS_TEST_TMPDIR/extra"
	assert_status 0
	# ls itself opens one descriptor to read the directory.
	[ "$(echo $output)" = "0 1 2 3" ] || [ "$(echo $output)" = "0 1 2" ]
	# The shell's table, listed by a plain child: no pipe or redirection,
	# which the shell would hold open while ls runs.
	run "$KERN" box fd2 --image host -- sh -c 'ls /proc/$$/fd'
	[ "$(echo $output)" = "0 1 2" ]
}

@test "FD-4: -d returns at once with NAME; captured pipes reach EOF [rootless]" {
	s=$(date +%s%N)
	out=$("$KERN" box det1 --image host -d --init --label kern.sbx.cfg=0123456789abcdef -- sleep 30 2>&1 || true)
	[ $(( ($(date +%s%N) - s) / 1000000 )) -lt 3000 ]
	[ "$out" = det1 ]
}

@test "-d: a detached box runs, is listed and can be stopped [rootless]" {
	run --separate-stderr "$KERN" box det2 --image host -d --init --label k=v -- sleep 30
	assert_status 0
	[ "$output" = det2 ]
	"$KERN" ps -q | grep -qx det2
	"$KERN" stop det2
	no_leftovers det2
}

@test "-d: a box that cannot start reports its error to the launcher [rootless]" {
	run -127 --separate-stderr "$KERN" box det3 --image host -d -- no-such-cmd
	assert_status 127
	[[ ${stderr_lines[0]} == "kern: cannot start 'no-such-cmd' in box: No such file or directory (os error 2)" ]]
	run --separate-stderr "$KERN" box det4 --image host -d -w /proc/x -- true
	[ "$status" -eq 125 ]
}

@test "OT-7: a detached box's log keeps at most 2 x 8 MiB, the newest output; its relay ends with the box [rootless]" {
	run "$KERN" box det5 --image host -d -- sh -c 'echo first; head -c 40000000 /dev/zero | tr "\0" x; echo; echo last; echo err >&2'
	assert_status 0
	for _ in $(seq 100); do "$KERN" ps -q | grep -qx det5 || break; sleep 0.1; done
	! "$KERN" ps -q | grep -qx det5 || false
	log=$(ls "$(runtime_dir)"/logs/det5-*.log)
	# The relay has written everything and is gone: no process holds the log.
	for _ in $(seq 50); do
		held=$(find /proc/[0-9]*/fd -lname "$log*" 2>/dev/null | head -1)
		[ -z "$held" ] && break
		sleep 0.1
	done
	[ -z "$held" ]
	[ "$(stat -c %s "$log.1")" -le $((8 << 20)) ]
	[ "$(stat -c %s "$log")" -le $((8 << 20)) ]
	[ "$(tail -n 2 "$log")" = "last
err" ]
	! grep -q first "$log" "$log.1" || false
	[ ! -e "$log.2" ]
}

@test "IO-1: a slow reader of a 1 GiB stdout: kern's RSS stays small, the client truncates, the box ends on SIGPIPE [rootless]" {
	mkfifo "$BATS_TEST_TMPDIR/out"
	"$KERN" box io1 --image host -- sh -c 'head -c 1073741824 /dev/zero' >"$BATS_TEST_TMPDIR/out" &
	kpid=$!
	exec 5<"$BATS_TEST_TMPDIR/out"
	# The slow reader reads nothing for a second: the box blocks on the full
	# pipe. stdout is the client's own pipe, passed through, so kern holds
	# none of it.
	sleep 1
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$kpid/status")
	head -c 1000 <&5 >/dev/null
	exec 5<&-
	st=0
	wait "$kpid" || st=$?
	[ "$st" -eq 141 ]
	echo "# FACT IO-1: kern supervisor RSS with a blocked 1 GiB writer: $rss KiB" >&3
	[ "$rss" -lt 16384 ]
}

@test "IO-3: a 100 MiB line without a newline, then the workload closes stdout: no hang, every byte through [rootless]" {
	run --separate-stderr timeout 30 sh -c '"$1" box io3 --image host -- sh -c '\''head -c 104857600 /dev/zero | tr "\0" x; exec >&-; sleep 0.1; echo done >&2'\'' | wc -c' sh "$KERN"
	assert_status 0
	[ "$output" = 104857600 ]
	[ "$stderr" = done ]
}

@test "IO-2: kern's own lines stay intact under a stderr flood [rootless]" {
	run -127 --separate-stderr "$KERN" box io2 --image host --uid-range -- sh -c 'i=0; while [ $i -lt 2000 ]; do echo "flood-line-$i" >&2; i=$((i+1)); done; no-such-cmd-here'
	assert_status 127
	grep -qx "kern: cannot start 'no-such-cmd-here' in box: No such file or directory (os error 2)" <<<"$stderr" ||
		grep -q "^sh: .*no-such-cmd-here" <<<"$stderr"
	! grep -E 'kern: (note|warning): .*flood' <<<"$stderr" || false
}

@test "pages mapped ahead (premap.h): where they pay, the supervisor's stack and state and PID 1's stack are populated before their first touch (the supervisor's deeper stack unshared over the clone), the densely written ones everywhere, and the box runs the same [rootless]" {
	command -v strace >/dev/null || skip "no strace on this host (Debian's strace package)"
	# The test build's KERN_TEST_PREMAP=1 takes the path of a machine whose
	# page faults are slow, whatever this one's are. --seccomp-bpf stops
	# only at madvise, so the timed fault is not slowed by tracing. One
	# file a process (-ff): in one file a call that another process's
	# interrupts is split over two lines (unfinished ... resumed), and
	# was not counted (the no-userns pass failed so once, 3 of 4).
	populated() {
		rm -f "$BATS_TEST_TMPDIR"/trace.*
		strace --seccomp-bpf -ff -qq -e trace=madvise -o "$BATS_TEST_TMPDIR/trace" "$@" >"$BATS_TEST_TMPDIR/out"
		cat "$BATS_TEST_TMPDIR"/trace.* | grep -c 'MADV_POPULATE_WRITE) = 0' || true
	}
	n=$(KERN_TEST_PREMAP=1 populated "$KERN_T" box premap --image host -- sh -c 'echo ran')
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = ran ]
	[ "$n" -ge 4 ]
	# Over PID 1's clone the supervisor's stack below the cloning frame is
	# its own (premap_stack_unshare), and right after it is shared again
	# for any later fork: the same range both ways.
	wiped=$(grep -h 'MADV_WIPEONFORK) = 0' "$BATS_TEST_TMPDIR"/trace.* | sed 's/, MADV_.*//')
	kept=$(grep -h 'MADV_KEEPONFORK) = 0' "$BATS_TEST_TMPDIR"/trace.* | sed 's/, MADV_.*//')
	[ -n "$wiped" ]
	[ "$wiped" = "$kept" ]
	here=$(populated "$KERN_T" box premap2 --image host -- sh -c 'echo ran')
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = ran ]
	# premap_dense(): the record (and the cgroup layout where caps are
	# placed), whose every page a start writes, on any machine.
	[ "$here" -ge 1 ]
	echo "# FACT: $n ranges populated ahead where it pays; $here on this machine as timed" >&3
}
