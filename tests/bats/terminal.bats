#!/usr/bin/env bats
# The box and the caller's terminal and process group (security-tests.md §12,
# breaks found by outside testing: OT-1, OT-2; issue 17 items 1, 2 and 12):
# the workload is a session of its own with no controlling terminal, TIOCSTI
# and TIOCLINUX are refused by seccomp, signals reach it once through kern, -t
# gives it a pty of the box's own, PID 1 shows no argv and name locks go with
# their boxes.
load helper

setup() {
	kern_private_dirs
	H=$TREE/tests/helpers
	T=$BATS_TEST_TMPDIR
}

# An interactive bash on a fresh pty, as a user's terminal: it runs the
# command line typed at 0.5 s, then a marker line, and "exit" once the
# marker is out. The marker comes once the command has ended: whatever it
# pushed into the terminal's input meanwhile is queued ahead of that exit,
# so the shell reads (and would run) it first. Output in $output.
typed_in_bash() {
	run "$H/on-pty" --at 0.5 "$1; echo on-pty-\$((6 * 7))\n" --when '^on-pty-42$' 'exit\n' -- bash --norc -i
}

@test "OT-1: TIOCSTI on the caller's terminal (fd 0, fd 2, untrusted, kern exec) never reaches the caller's shell [rootless]" {
	"$KERN" box ot1x -q -d --image host -v "$H:/h:ro" -- sleep 60 >/dev/null
	for how in "box ot1a -q --image host" "box ot1b -q --image host --security-profile untrusted" \
		   "box ot1c -q --image host --stdin-null" "exec ot1x"; do
		rm -f "$T/X"
		fd=0 redirect=
		if [[ $how == *--stdin-null ]]; then
			how=${how% --stdin-null} fd=2 redirect='</dev/null'
		fi
		bind=
		[[ $how == box* ]] && bind="-v $H:/h:ro"
		typed_in_bash "$KERN $how $bind -- python3 /h/tty-push $fd sti 'touch $T/X' $redirect"
		echo "$how (fd $fd): $output"
		assert_line_re '^refused EPERM'
		[ ! -e "$T/X" ]
	done
	"$KERN" stop -t 0 ot1x
}

@test "OT-1: TIOCLINUX is refused by seccomp in every mode, on a terminal or not [rootless]" {
	# On a pty or a pipe the kernel itself answers ENOTTY or EINVAL: only
	# the filter says EPERM.
	for mode in allowlist denylist allowlist-audit; do
		typed_in_bash "KERN_SECCOMP=$mode $KERN box ot1l -q --image host -v $H:/h:ro -- python3 /h/tty-push 0 linux"
		echo "$mode: $output"
		assert_line_re '^refused EPERM'
		run env KERN_SECCOMP=$mode "$KERN" box ot1l -q --image host -v "$H:/h:ro" -- python3 /h/tty-push 1 linux
		[ "$output" = "refused EPERM" ]
	done
	run --separate-stderr "$KERN" box ot1l -q --image host --security-profile untrusted -v "$H:/h:ro" -- python3 /h/tty-push 1 linux
	[ "$output" = "refused EPERM" ]
}

@test "OT-1: the workload and kern exec's command lead sessions of their own, with no controlling terminal [rootless]" {
	typed_in_bash "$KERN box ot1s -q --image host -v $H:/h:ro -- python3 /h/tty-push session"
	assert_line_re '^session-leader yes'
	assert_line_re '^ctty 0'
	assert_line_re '^init-session own'
	"$KERN" box ot1t -q -d --image host -v "$H:/h:ro" -- sleep 60 >/dev/null
	typed_in_bash "$KERN exec ot1t -- python3 /h/tty-push session"
	assert_line_re '^session-leader yes'
	assert_line_re '^ctty 0'
	"$KERN" stop -t 0 ot1t
	# The same through the applet chain --plan prints.
	"$KERN" box ot1p -q --image host -v "$H:/h:ro" --plan -- python3 /h/tty-push session >"$T/chain"
	typed_in_bash "KERN_QUIET=1 sh $T/chain"
	assert_line_re '^session-leader yes'
	assert_line_re '^ctty 0'
	assert_line_re '^init-session own'
}

# run_session SECONDS SCRIPT: SCRIPT in a new session (its own process
# group), with a deadline; whatever is left of that session afterwards is
# killed, so a frozen session cannot outlive the test.
run_session() {
	setsid bash -c "$2" >"$T/session.out" 2>&1 &
	local sid=$! waited=0
	while kill -0 "$sid" 2>/dev/null && [ $waited -lt $(($1 * 20)) ]; do sleep 0.05; waited=$((waited + 1)); done
	kill -CONT -- "-$sid" 2>/dev/null || true
	kill -KILL -- "-$sid" 2>/dev/null || true
	wait "$sid" 2>/dev/null || true
	output=$(cat "$T/session.out")
}

@test "OT-2: kill -KILL 0 in the box kills the box, never the caller's process group [rootless]" {
	run_session 15 "sleep 30 & $KERN box ot2k -q --image host -- sh -c 'kill -KILL 0'; echo \"survived \$?\"; kill %1"
	echo "$output"
	[ "$output" = "survived 137" ]
}

@test "OT-2: kill(0, SIGSTOP) in the box freezes neither the caller nor the supervisor; --timeout 2 fires on time [rootless]" {
	# The caller ticks in the background of the same process group while
	# the box runs; a worker in the box stops its own group.
	run_session 12 "(while :; do date +%s%N >>$T/tick; sleep 0.1; done) & s=\$(date +%s%N)
$KERN box ot2s -q --image host --timeout 2 -- sh -c 'sh -c \"sleep 0.3; kill -STOP 0\" & sleep 100'
echo \"rc \$? ms \$(( (\$(date +%s%N) - s) / 1000000 ))\"; kill %1"
	echo "$output"
	[[ $output =~ ^rc\ 143\ ms\ ([0-9]+)$ ]]
	ms=${BASH_REMATCH[1]}
	[ "$ms" -ge 2000 ]
	[ "$ms" -lt 3000 ]
	# The caller kept ticking while the box's group was stopped: its ticks
	# span the box's two seconds with no gap a stop would leave (nothing
	# continues the session before the test's end). Gaps, not a count, so
	# a loaded machine's slow forks do not fail it.
	awk 'NR > 1 { gap = ($1 - prev) / 1000000; if (gap > max) max = gap }
	     NR == 1 { first = $1 } { prev = $1 }
	     END { span = (prev - first) / 1000000
	           printf "ticks %d span %d ms longest gap %d ms\n", NR, span, max
	           exit !(span >= 1900 && max < 1000) }' "$T/tick"
	no_leftovers ot2s
}

@test "signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT to kern's process group reach the workload exactly once [rootless]" {
	for sig in INT TERM HUP QUIT; do
		: >"$T/got"
		writable_by_box "$T" "$T/got"
		setsid "$KERN" box sig1 -q --image host -v "$T:/w" -- sh -c \
			"trap 'echo $sig >>/w/got; sleep 0.3; exit 5' $sig; echo up >/w/got; while :; do sleep 0.05; done" &
		pid=$!
		wait_for "$T/got" up 10
		kill "-$sig" -- "-$pid"
		rc=0; wait "$pid" || rc=$?
		echo "$sig: rc $rc, got: $(cat "$T/got")"
		[ "$rc" -eq 5 ]
		[ "$(grep -c "^$sig\$" "$T/got")" -eq 1 ]
	done
}

@test "signals: Ctrl-C on the caller's terminal reaches the workload once [rootless]" {
	run "$H/on-pty" --at 0.5 "$KERN box sig2 -q --image host -- sh -c 'trap \"echo caught; sleep 0.3; exit 6\" INT; while :; do sleep 0.05; done'; echo rc=\$?\n" \
		--at 2 '\x03' --at 3.5 'exit\n' -- bash --norc -i
	echo "$output"
	[ "$(grep -c 'caught$' <<<"$output")" -eq 1 ]
	assert_line_re '^rc=6'
}

@test "-t: a pty of the box's own with the caller's window size, SIGWINCH, job control; the caller's modes restored [rootless]" {
	run "$H/on-pty" --size 33x101 --at 1 'tty; stty size\n' --resize-at 1.5 40x120 \
		--at 2 'stty size; sleep 5 &\n' --at 2.5 'jobs; set -o | grep monitor\n' --at 3 'exit 3\n' \
		-- "$KERN" box tty1 -q -t --image host -- bash --norc -i
	echo "$output"
	assert_line_re '^/dev/pts/0'
	assert_line_re '^33 101'
	assert_line_re '^40 120'
	assert_line_re 'Running +sleep 5 &'
	assert_line_re '^monitor[[:space:]]+on'
	[ "${lines[-1]}" = "[exit 3] [modes same]" ]
}

@test "-t: ^C and ^Z go to the box's foreground job; the box's own /dev is private [rootless]" {
	run "$H/on-pty" --at 0.8 'sleep 10\n' --at 1.5 '\x03' --at 2 'echo rc=$?\n' --at 2.3 'sleep 20\n' \
		--at 3 '\x1a' --at 3.5 'jobs; kill -9 %1\n' \
		--at 4 'ls -l /dev/pts /dev/ptmx; grep -E " /dev/pts " /proc/self/mounts\n' --at 4.5 'exit\n' \
		-- "$KERN" box tty2 -q -t --image host -- bash --norc -i
	echo "$output"
	assert_line_re '^rc=130'
	assert_line_re 'Stopped +sleep 20'
	assert_line_re '/dev/ptmx -> pts/ptmx'
	# A devpts of its own: only the box's pty and ptmx, nosuid and noexec.
	assert_line_re '^devpts /dev/pts devpts .*nosuid.*noexec'
	refute_line_re '^c.* [1-9][0-9]* +[A-Z][a-z]{2} .* [1-9]$'
	[ "${lines[-1]}" = "[exit 0] [modes same]" ]
}

@test "-t: TIOCSTI into the box's own terminal is refused too; --user owns its pty [rootless]" {
	run "$H/on-pty" -- "$KERN" box tty3 -q -t --image host -v "$H:/h:ro" -- sh -c 'python3 /h/tty-push 0 sti "echo pushed-in"; python3 /h/tty-push 0 linux'
	echo "$output"
	[ "${lines[0]}" = "refused EPERM" ]
	[ "${lines[1]}" = "refused EPERM" ]
	[ "${lines[-1]}" = "[exit 0] [modes same]" ]
	run "$H/on-pty" -- "$KERN" box tty4 -q -t --image host -u nobody -- sh -c 'stat -c "%U %a" $(tty); echo hi >/dev/tty'
	echo "$output"
	if [[ $output == *"cannot be mapped"* ]]; then skip "no subordinate id range for $(id -un)"; fi
	[ "${lines[0]}" = "nobody 620" ]
	[ "${lines[1]}" = "hi" ]
}

@test "-t: refused without a terminal on stdin, and with -d; without -t no pty and the default /dev [rootless]" {
	run --separate-stderr "$KERN" box tty5 -q -t --image host -- true </dev/null
	assert_status 1
	[ "$stderr" = "error: box: -t needs a terminal on stdin (the input device is not a TTY)" ]
	run --separate-stderr "$KERN" box tty5 -q -t -d --image host -- true
	assert_status 1
	[[ $stderr == "error: box: -t cannot be combined with -d"* ]]
	"$KERN" box tty5 -q -d --image host -- sleep 30 >/dev/null
	run --separate-stderr "$KERN" exec -t tty5 -- true </dev/null
	assert_status 1
	[ "$stderr" = "error: box: -t needs a terminal on stdin (the input device is not a TTY)" ]
	"$KERN" stop -t 0 tty5
	run "$H/on-pty" -- "$KERN" box tty6 -q --image host -- sh -c 'ls /dev | tr "\n" " "; tty'
	[ "${lines[0]}" = "fd full mqueue null random shm stderr stdin stdout urandom zero not a tty" ]
}

@test "-t: what a quick box wrote reaches the terminal even when its pty came to kern with PID 1's last messages [rootless]" {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	# The supervisor waits before its loop until the workload has written
	# and made the file, by when PID 1 has ended too: the loop then meets
	# PID 1's exit with the pty still unread (as under load, once, in make
	# check).
	# (A directory any workload may write in: without a user namespace it
	# runs as uid 65534.)
	install -d -m 0777 "$T/gate"
	run "$H/on-pty" -- env KERN_QUIET=1 KERN_TEST_PAUSE=supervise KERN_TEST_RESUME="$T/gate/go" \
		"$KERN_T" box tty8 -q -t --image host -v "$T/gate:$T/gate" -- sh -c "echo from-the-box; touch '$T/gate/go'"
	echo "$output"
	grep -q "paused at supervise" <<<"$output"
	grep -q "^from-the-box" <<<"$output"
	[ "${lines[-1]}" = "[exit 0] [modes same]" ]
}

@test "-t: the workload is looked up and started as without -t: a script without #! is refused, not run by a shell [rootless]" {
	mkdir -p "$T/c"
	printf 'echo ran-by-a-shell\n' >"$T/c/mycmd"
	chmod 0755 "$T/c/mycmd"
	chmod -R a+rX "$T/c"
	run "$H/on-pty" -- env KERN_QUIET=1 "$KERN" box tty9 -q -t --image host -v "$T/c:/pc:ro" -e PATH=/pc -- mycmd
	echo "$output"
	! grep -q ran-by-a-shell <<<"$output" || false
	grep -q "kern: cannot start 'mycmd' in box: Exec format error (os error 8)" <<<"$output"
	[ "${lines[-1]}" = "[exit 127] [modes same]" ]
	run "$H/on-pty" -- env KERN_QUIET=1 "$KERN" box tty9 -q -t --image host -- sh -c 'echo "sid $(cut -d" " -f6 /proc/self/stat) pid $$"'
	echo "$output"
	[[ $output =~ sid\ ([0-9]+)\ pid\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	[ "${lines[-1]}" = "[exit 0] [modes same]" ]
}

@test "-t: --plan prints --tty for kern-wait, kern-fs and kern-seccomp, and the chain behaves the same [rootless]" {
	"$KERN" box tty7 -q -t --image host --plan -- sh -c 'tty; stty size' >"$T/chain"
	[ "$(grep -c -- '--tty' "$T/chain")" -eq 3 ]
	grep -q '^  kern-wait .*--tty' "$T/chain"
	grep -q '^  kern-fs .*--tty' "$T/chain"
	grep -q '^  kern-seccomp .*--tty' "$T/chain"
	run "$H/on-pty" --size 30x90 -- env KERN_QUIET=1 sh "$T/chain"
	echo "$output"
	[ "${lines[0]}" = /dev/pts/0 ]
	[ "${lines[1]}" = "30 90" ]
	[ "${lines[-1]}" = "[exit 0] [modes same]" ]
}

@test "kern exec -t: a terminal with job control in a box started without -t, the box's /dev/pts in one started with it [rootless]" {
	"$KERN" box tty8 -q -d --image host -- sleep 60 >/dev/null
	run "$H/on-pty" --size 20x70 --at 0.7 'stty size; sleep 20 &\n' --at 1.2 'jobs\n' --at 1.7 'exit 4\n' \
		-- "$KERN" exec -t tty8 -- bash --norc -i
	echo "$output"
	assert_line_re '^20 70'
	assert_line_re 'Running +sleep 20 &'
	[ "${lines[-1]}" = "[exit 4] [modes same]" ]
	"$KERN" stop -t 0 tty8
	"$H/on-pty" --timeout 10 -- "$KERN" box tty9 -q -t --image host -- sleep 4 >"$T/t9" &
	for _ in $(seq 100); do "$KERN" ps -q | grep -qx tty9 && break; sleep 0.05; done
	run "$H/on-pty" -- "$KERN" exec -t tty9 -- tty
	echo "$output"
	[ "${lines[0]}" = /dev/pts/1 ]
	wait
}

@test "issue 17 item 12: /proc/1/cmdline in the box is kern-init, never kern's argv or -v host paths [rootless]" {
	mkdir -p "$T/secret-src"
	run "$KERN" box cl1 -q --image host -v "$T/secret-src:/w" -e K=v -- sh -c 'cat /proc/1/cmdline | od -An -c | tr -s " "'
	assert_status 0
	[ "$output" = " k e r n - i n i t \0" ]
	"$KERN" box cl2 -q --image host -v "$T/secret-src:/w" --plan -- cat /proc/1/cmdline >"$T/chain"
	run env KERN_QUIET=1 sh "$T/chain"
	[ "$output" = "kern-init" ]
	[[ $output != *secret-src* ]]
}

@test "issue 17 item 12: claims/NAME.lock goes with its box, also under concurrent claims of one name [rootless]" {
	rt=$(runtime_dir)
	"$KERN" box lk1 -q --image host -- true
	[ ! -e "$rt/claims/lk1.lock" ]
	# Boxes of one name, started together round after round: at most one
	# runs at a time (the marker directory proves it), the rest are
	# refused, and no lock file is left.
	mkdir -p "$T/w"; writable_by_box "$T/w"
	for round in $(seq 5); do
		for i in $(seq 12); do
			"$KERN" box same -q --image host -v "$T/w:/w" -- \
				sh -c 'mkdir /w/held || echo DOUBLE; sleep 0.05; rmdir /w/held' >>"$T/log" 2>>"$T/err" &
		done
		wait
	done
	[ -s "$T/log" ] || true
	[ -z "$(grep DOUBLE "$T/log")" ]
	[ ! -e "$rt/claims/same.lock" ]
	[ -z "$(grep -v -e "already running" -e '^hint: ' "$T/err")" ]
	# A supervisor killed outright leaves its record and lock; the next
	# look at the registry removes both.
	"$KERN" box lk2 -q -d --image host -- sleep 60 >/dev/null
	sup=$(awk -F'\t' '$1 == "supervisor" { print $2 }' "$rt/instances/lk2")
	kill -KILL "$sup"
	# Dead (a zombie counts as dead) before the registry is looked at.
	for _ in $(seq 200); do
		st=$(awk '{ print $3 }' "/proc/$sup/stat" 2>/dev/null || true)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.02
	done
	"$KERN" ps -q >/dev/null
	[ ! -e "$rt/instances/lk2" ]
	[ ! -e "$rt/claims/lk2.lock" ]
	ls -A "$rt/claims"
	[ -z "$(ls -A "$rt/claims" | grep -E '^(lk1|lk2|same)\.lock$')" ]
}
