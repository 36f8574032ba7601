#!/usr/bin/env bats
# kern ps, stop, exec and recover (box-cli.md §4 outcome bytes, §5 readiness
# pipe, §7.2 subcommands; isolation.md §8.2 kern stop, §8.4 teardown order,
# §10 kern exec): CLI-13, NS-3 (exec), CAP-5, SC-10 (exec), CG-10, DL-2,
# KILL-5, CONC-4, FD-1 (exec). CONC-3 is in boxctl-storm.bats.
load helper
load boxctl

setup_file() {
	kern_private_dirs
	make_rootfs "$BATS_FILE_TMPDIR/rootfs"
}

setup() { kern_private_dirs; }

teardown() { boxes_cleanup; }

# ---- CLI-13: formats and the missing box ----

@test "CLI-2: kern exec --help contains '-u <user>' and exits 0 [rootless]" {
	run --separate-stderr "$KERN" exec --help
	assert_status 0
	[[ $output == *"-u <user>"* ]]
	[ -z "$stderr" ]
	for c in ps stop recover; do
		run "$KERN" "$c" --help
		assert_status 0
		assert_line_re "^usage: kern $c"
	done
}

@test "CLI-13: with no box at all, ps prints nothing, ps --json prints [], recover exits 0 silently [rootless]" {
	rm -rf "$XDG_RUNTIME_DIR/kern"
	run --separate-stderr "$KERN" ps -q
	assert_status 0
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr "$KERN" ps --json
	assert_status 0
	[ "$output" = "[]" ]
	run --separate-stderr "$KERN" ps --filter name=x --json
	[ "$output" = "[]" ]
	run --separate-stderr "$KERN" recover
	assert_status 0
	[ -z "$output" ]
	# and none of them created kern's state as a side effect
	[ ! -e "$XDG_RUNTIME_DIR/kern" ]
}

@test "CLI-13: stop and exec of a missing box exit 1 with 'no running box named'; exec writes no outcome bytes [rootless]" {
	run --separate-stderr "$KERN" stop nosuchbox
	assert_status 1
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "error: box: no running box named 'nosuchbox'" ]
	[[ ${stderr_lines[1]} == hint:* ]]
	with_fds "$KERN" exec nosuchbox -- true
	assert_status 1
	assert_line_re "^error: box: no running box named 'nosuchbox'$"
	[ "$(started_bytes)" = "" ]
	[ "$(alive_bytes)" = Ax ]
	# a running box of another name changes nothing
	kern_d other --image host -- sleep 60
	run "$KERN" stop nosuchbox
	assert_status 1
	[ "$(box_field other status)" = running ]
}

@test "CLI-13: usage errors of ps, stop, exec, recover exit 1 with an error: box: line [rootless]" {
	for args in "ps --bogus" "ps --filter foo=bar" "ps -q --json" "ps extra" "stop" "stop --stop-signal NOPE x" \
		"stop --stop-timeout -1 x" "stop -x y" "exec" "exec box" "exec box --" "exec box -w rel -- true" \
		"exec box -e NOEQUALS -- true" "exec box --frob -- true" "exec 'bad/name' -- true" "recover now"; do
		eval "run --separate-stderr \"\$KERN\" $args"
		[ "$status" -eq 1 ] || { echo "kern $args: status $status"; return 1; }
		[ -z "$output" ] || { echo "kern $args printed on stdout: $output"; return 1; }
		[[ ${stderr_lines[0]} == "error: box: "* ]] || { echo "kern $args: $stderr"; return 1; }
	done
}

# ---- ps ----

@test "ps: -q one name per line, --filter name= exact, --json array with name/status/labels [rootless]" {
	kern_d a1 --image host --init --label kern.sbx.cfg=0123456789abcdef --label team=x -- sleep 60
	kern_d a10 --image host -- sleep 60
	run --separate-stderr "$KERN" ps -q
	assert_status 0
	[ -z "$stderr" ]
	[ "$output" = "$(printf 'a1\na10')" ]
	# exact: name=a1 is not a prefix match
	run "$KERN" ps -q --filter name=a1
	[ "$output" = a1 ]
	run "$KERN" ps -q --filter=name=a
	[ -z "$output" ]
	run "$KERN" ps --filter name=a1 --json
	assert_status 0
	# userns: false only for root's boxes without one (the no-userns pass).
	local userns=true
	[ -n "${KERN_TEST_CHROOT:-}" ] && userns=false
	python3 - "$output" "$userns" <<-'EOF'
		import json, sys
		rows = json.loads(sys.argv[1])
		assert isinstance(rows, list) and len(rows) == 1, rows
		r = rows[0]
		assert r["name"] == "a1" and r["status"] == "running", r
		assert r["labels"] == {"kern.sbx.cfg": "0123456789abcdef", "team": "x"}, r
		assert r["image"] == "host" and isinstance(r["created"], int) and r["pid"] > 1 and r["pid1"] > 1, r
		assert r["userns"] is (sys.argv[2] == "true"), r
	EOF
	run "$KERN" ps --json
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert [x["name"] for x in r]==["a1","a10"], r; assert r[1]["labels"]=={}' "$output"
	run "$KERN" ps -q --filter label=team=x
	[ "$output" = a1 ]
	run "$KERN" ps -q --filter label=team
	[ "$output" = a1 ]
	# any of the names, all of the labels
	run "$KERN" ps -q --filter name=a1 --filter name=a10
	[ "$output" = "$(printf 'a1\na10')" ]
	run "$KERN" ps -q --filter name=a10 --filter label=team
	[ -z "$output" ]
	# the table: a header, then one row per box
	run "$KERN" ps
	assert_line_re '^NAME +IMAGE +PID +CREATED +LABELS$'
	assert_line_re '^a1 +host +[0-9]+ .*kern.sbx.cfg=0123456789abcdef,team=x$'
	[ "${#lines[@]}" -eq 3 ]
}

@test "KILL-5: a SIGKILLed supervisor's box leaves ps -q at once, even unreaped; recover removes its scratch [rootless]" {
	# The box's parent never waits: after the kill the supervisor is a
	# zombie with its recorded start time, and must count as dead.
	sh -c '"$0" box k5 --rootfs "$1" -- sh -c "echo data > /tmp/written; sleep 60" & echo $! >"$2"; exec sleep 30' \
		"$KERN" "$(ROOTFS)" "$BATS_TEST_TMPDIR/sup" &
	holder=$!
	rt=$(runtime_dir)
	wait_pid1 k5
	sup=$(cat "$BATS_TEST_TMPDIR/sup")
	pid1=$(box_field k5 pid1)
	[ "$(box_field k5 pid)" = "$sup" ]
	ls "$rt/scratch" | grep -q "^k5-$sup$"
	kill -9 "$sup"
	# kill(2) returns before the supervisor has died: under load it was
	# still running when ps looked. Dead means a zombie here (unreaped).
	for _ in $(seq 200); do
		st=$(awk '{ print $3 }' "/proc/$sup/stat" 2>/dev/null || true)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.02
	done
	run "$KERN" ps -q
	assert_status 0
	refute_line_re '^k5$'
	[ ! -e "$rt/instances/k5" ]	# the dead record went with that ps
	# PID 1 follows its supervisor (parent-death signal; DL-4 holds it to
	# 1.5 s, this only proves the box really ended)
	wait_gone "$pid1" 5000
	[ -d "$rt/scratch/k5-$sup" ]
	run --separate-stderr "$KERN" recover
	assert_status 0
	[ -z "$output" ]
	[ ! -e "$rt/scratch/k5-$sup" ]
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	assert_no_leftovers
}

@test "a detached box's record names its PID 1 and namespaces by the time -d returns, written once after the claim [rootless]" {
	# PID 1's pid goes into the record with its namespaces, in one write,
	# before the launcher hears of the start: ps and exec right after -d
	# find both.
	rt=$(runtime_dir)
	for i in 1 2 3 4 5 6 7 8; do
		kern_d "rec$i" --rootfs "$(ROOTFS)" -- sleep 60
		pid1=$(sed -n 's/^pid1\t//p' "$rt/instances/rec$i")
		[ -n "$pid1" ] && [ "$pid1" -gt 1 ] || { echo "rec$i: pid1 '$pid1'"; cat "$rt/instances/rec$i"; return 1; }
		grep -q "^nsfds	[0-9]" "$rt/instances/rec$i" || { echo "rec$i: no nsfds"; cat "$rt/instances/rec$i"; return 1; }
		[ "$(box_field "rec$i" pid1)" = "$pid1" ]
		# created: the wall clock's seconds at the start
		created=$(sed -n 's/^created\t//p' "$rt/instances/rec$i")
		now=$(date +%s)
		[ "$created" -le "$now" ] && [ "$created" -ge $((now - 30)) ] || { echo "rec$i: created $created, now $now"; return 1; }
	done
	# One write per start after the claim: the claim's link(), then a
	# single rename() of the whole record.
	command -v strace >/dev/null || skip "no strace"
	strace -f -e trace=rename,renameat,renameat2,link,linkat -o "$BATS_TEST_TMPDIR/trace" \
		"$KERN" box once --rootfs "$(ROOTFS)" -- true
	run grep -cE '^[0-9]+ +rename' "$BATS_TEST_TMPDIR/trace"
	[ "$output" = 1 ] || { cat "$BATS_TEST_TMPDIR/trace"; return 1; }
}

@test "recover never touches a live box: its record and scratch stay, exec still works [rootless]" {
	kern_d live --rootfs "$(ROOTFS)" -- sleep 60
	rt=$(runtime_dir)
	before=$(ls "$rt/scratch")
	run "$KERN" recover
	assert_status 0
	[ "$(ls "$rt/scratch")" = "$before" ]
	[ -f "$rt/instances/live" ]
	run "$KERN" exec live -- cat /srv/marker
	assert_status 0
	[ "$output" = box-rootfs ]
}

@test "recover removes the scratch of a dead range-mapped box whose files belong to subordinate ids [rootless]" {
	is_root && skip "root removes any file; this is the unprivileged path"
	# The writable layer on disk, as on a kernel whose tmpfs cannot hold it
	# (before 6.6): the one case left where scratch holds the box's files.
	KERN_TEST_NO_TMPFS_XATTR=1 "$KERN_T" box rm1 -q --rootfs "$(ROOTFS)" --uid-range -- sh -c 'mkdir -p /tmp/d/e && touch /tmp/d/e/f && chown -R 1000:1000 /tmp/d && chmod 700 /tmp/d /tmp/d/e && sleep 60' &
	wait_pid1 rm1
	sup=$(box_field rm1 pid)
	rt=$(runtime_dir)
	# the files exist, owned by a subordinate uid the caller cannot remove
	for _ in $(seq 100); do [ -e "$rt/scratch/rm1-$sup/upper/tmp/d" ] && break; sleep 0.05; done
	[ "$(stat -c %u "$rt/scratch/rm1-$sup/upper/tmp/d")" != "$(id -u)" ]
	! rm -rf "$rt/scratch/rm1-$sup/upper/tmp/d" 2>/dev/null || false
	kill -9 "$sup"
	wait 2>/dev/null || true
	run "$KERN" recover
	assert_status 0
	[ ! -e "$rt/scratch/rm1-$sup" ]
	assert_no_leftovers
}

# ---- stop (DL-2) ----

@test "DL-2: stop of a CPU-bound workload without a handler returns in < 5 s and the box is gone [rootless]" {
	kern_d cpu --image host -- sh -c 'while :; do :; done'
	pid1=$(box_field cpu pid1)
	sup=$(box_field cpu pid)
	t0=$(now_ms)
	run --separate-stderr "$KERN" stop cpu
	t1=$(now_ms)
	assert_status 0
	[ -z "$output" ]
	echo "stop took $((t1 - t0)) ms"
	[ $((t1 - t0)) -lt 5000 ]
	run "$KERN" ps -q
	refute_line_re '^cpu$'
	! pid_alive "$pid1" || false
	wait_gone "$sup" 1000
	assert_no_leftovers
}

@test "DL-2: stop of a workload that traps SIGTERM waits the grace, then kills; the trap ran [rootless]" {
	mkdir -p "$BATS_TEST_TMPDIR/m"; writable_by_box "$BATS_TEST_TMPDIR/m"
	kern_d trap --image host -v "$BATS_TEST_TMPDIR/m:/m" -- sh -c 'trap "echo TERM >> /m/got" TERM; while :; do sleep 0.1; done'
	pid1=$(box_field trap pid1)
	t0=$(now_ms)
	run "$KERN" stop --stop-timeout 2 trap
	t1=$(now_ms)
	assert_status 0
	echo "stop took $((t1 - t0)) ms"
	[ $((t1 - t0)) -ge 2000 ]
	[ $((t1 - t0)) -lt 3500 ]
	[ "$(cat "$BATS_TEST_TMPDIR/m/got")" = TERM ]
	! pid_alive "$pid1" || false
	run "$KERN" ps -q
	[ -z "$output" ]
	assert_no_leftovers
}

@test "DL-2: the default grace is 10 s: a SIGTERM-trapping box is gone after 10 s + at most 1 s" {
	kern_d trap10 --image host -- sh -c 'trap "echo caught" TERM; while :; do sleep 0.1; done'
	t0=$(now_ms)
	run "$KERN" stop trap10
	t1=$(now_ms)
	assert_status 0
	echo "stop took $((t1 - t0)) ms"
	[ $((t1 - t0)) -ge 10000 ]
	[ $((t1 - t0)) -le 11000 ]
	run "$KERN" ps -q
	[ -z "$output" ]
}

@test "stop: a foreground box ends 143 through init; --stop-signal reaches the workload; several names at once [rootless]" {
	"$KERN" box fg --image host -- sleep 60 &
	fg=$!
	wait_pid1 fg
	run "$KERN" stop fg
	assert_status 0
	wait "$fg" && st=0 || st=$?
	[ "$st" -eq 143 ]
	# ALRM is not one init forwards: it goes straight to the workload.
	mkdir -p "$BATS_TEST_TMPDIR/m"; writable_by_box "$BATS_TEST_TMPDIR/m"
	# (the stop waits for the trap: under load, ALRM once came before it
	# was set, and its default action ended sh without a word)
	kern_d s1 --image host -v "$BATS_TEST_TMPDIR/m:/m" -- sh -c 'trap "echo ALRM >> /m/s1; exit 0" ALRM; : >/m/trapped; while :; do sleep 0.1; done'
	kern_d s2 --image host -- sleep 60
	for _ in $(seq 200); do [ -e "$BATS_TEST_TMPDIR/m/trapped" ] && break; sleep 0.05; done
	run "$KERN" stop --stop-signal SIGALRM -t 5 s1 s2
	assert_status 0
	[ "$(cat "$BATS_TEST_TMPDIR/m/s1")" = ALRM ]
	run "$KERN" ps -q
	[ -z "$output" ]
	# a missing name among live ones: the live ones stop, the exit is 1
	kern_d s3 --image host -- sleep 60
	run "$KERN" stop s3 nothere
	assert_status 1
	assert_line_re "no running box named 'nothere'"
	run "$KERN" ps -q
	[ -z "$output" ]
}

@test "stop ends processes started by kern exec too; the exec reports 137 [rootless]" {
	kern_d ex --image host -- sleep 60
	"$KERN" exec ex -- sleep 60 &
	ex=$!
	sleep 0.3
	run "$KERN" stop -t 0 ex
	assert_status 0
	wait "$ex" && st=0 || st=$?
	[ "$st" -eq 137 ]
}

# ---- CONC-4: a stale record whose pid was reused ----

@test "CONC-4: a record whose supervisor pid now belongs to an unrelated process: not listed, never signalled [rootless]" {
	mark=$BATS_TEST_TMPDIR/signalled
	bash -c 'for s in TERM INT HUP QUIT USR1 USR2 ALRM; do trap "echo $s >> $0" $s; done; sleep 1000 & wait; sleep 1000 & wait' "$mark" &
	victim=$!
	sleep 0.2
	child=$(cat "/proc/$victim/task/$victim/children" | awk '{print $1}')
	rt=$(runtime_dir)
	mkdir -p "$rt/instances" "$rt/claims" "$rt/scratch" "$rt/logs"
	chmod 700 "$rt" "$rt"/*
	record() { # name supervisor start pid1
		printf 'name\t%s\nsupervisor\t%s\nstart\t%s\npid1\t%s\ncreated\t0\nimage\thost\ncgroup\t\nseccomp\tallowlist\ncaps\t0\nuser\t\nlower\t\nscratch\t%s\nbyte1\t0\n' \
			"$1" "$2" "$3" "$4" "$rt/scratch/$1-$2" >"$rt/instances/$1"
	}
	real_start=$(awk '{print $22}' "/proc/$victim/stat")
	record stale "$victim" $((real_start + 7)) "$victim"
	run "$KERN" ps -q
	[ -z "$output" ]
	[ ! -e "$rt/instances/stale" ]
	record stale "$victim" $((real_start + 7)) "$victim"
	run "$KERN" stop stale
	assert_status 1
	record stale "$victim" $((real_start + 7)) "$victim"
	run "$KERN" exec stale -- true
	assert_status 1
	record stale "$victim" $((real_start + 7)) "$victim"
	run "$KERN" recover
	assert_status 0
	# The supervisor's identity holds but "PID 1" is not its box's init:
	# stop must touch neither (and exec must not join its namespaces).
	record forged "$victim" "$real_start" "$child"
	run "$KERN" stop -t 0 forged
	run "$KERN" exec forged -- true
	assert_status 1
	record forged "$victim" "$real_start" 0	# "still in setup": never kill a non-kern process
	run "$KERN" stop -t 0 forged
	pid_alive "$victim"
	pid_alive "$child"
	[ ! -e "$mark" ] || { echo "signalled: $(cat "$mark")"; return 1; }
	rm -f "$rt/instances/forged"
	# The shell first, so it cannot start its second sleep; then its child.
	kill -9 "$victim" 2>/dev/null || true
	kill "$child" 2>/dev/null || true
	wait 2>/dev/null || true
}

# ---- exec ----

@test "NS-3 via exec: the box's hostname, files and pid namespace (< 20 pids, fewer than the host) [rootless]" {
	kern_d nsbox --rootfs "$(ROOTFS)" --hostname inside -- sh -c 'echo from-workload > /tmp/w; sleep 60'
	for _ in $(seq 50); do "$KERN" exec nsbox -- test -e /tmp/w && break; sleep 0.05; done
	run --separate-stderr "$KERN" exec nsbox -- sh -c 'hostname; cat /tmp/w /srv/marker; ls /proc | grep -c "^[0-9]"'
	assert_status 0
	[ -z "$stderr" ]
	[ "${lines[0]}" = inside ]
	[ "${lines[1]}" = from-workload ]
	[ "${lines[2]}" = box-rootfs ]
	n=${lines[3]}
	host=$(ls /proc | grep -c '^[0-9]')
	echo "pids in box $n, on the host $host"
	[ "$n" -lt 20 ]
	[ "$n" -lt "$host" ]
	# host paths are not there
	run "$KERN" exec nsbox -- ls "$BATS_FILE_TMPDIR"
	[ "$status" -ne 0 ]
}

@test "exec: stdin passes through, -w, -e and --env-file on top of the box env, nothing from the caller's env [rootless]" {
	kern_d envbox --image host -e FROM_BOX=1 -e OVER=box -w /usr -- sleep 60
	run "$KERN" exec envbox -- pwd
	[ "$output" = /usr ]	# the box's workdir is the default
	printf 'A=from file\nOVER=file\n' >"$BATS_TEST_TMPDIR/env"
	HOST_SECRET=x run "$KERN" exec envbox -w /etc -e OVER=flag -e B=2 --env-file "$BATS_TEST_TMPDIR/env" -- \
		sh -c 'pwd; echo "$FROM_BOX|$OVER|$A|$B|${HOST_SECRET-unset}|$HOSTNAME|$PATH"'
	assert_status 0
	[ "${lines[0]}" = /etc ]
	[ "${lines[1]}" = "1|flag|from file|2|unset|envbox|/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" ]
	run sh -c 'echo through-stdin | "$0" exec envbox -- cat' "$KERN"
	[ "$output" = through-stdin ]
	# docker style: the command may follow NAME and flags without --
	run "$KERN" exec envbox -w / pwd
	[ "$output" = / ]
	# an env-file inside kern's own state is refused
	run "$KERN" exec envbox --env-file "$(runtime_dir)/instances/envbox" -- true
	assert_status 1
}

@test "exec exit codes: the command's own, 128+N, 127 for a missing command or -w, 126 for a non-executable file [rootless]" {
	kern_d codes --rootfs "$(ROOTFS)" -- sh -c 'echo "#!/bin/sh" > /tmp/noexec; chmod 644 /tmp/noexec
		mkdir /tmp/p; echo "echo ran-by-a-shell" > /tmp/p/noshebang; chmod 755 /tmp/p/noshebang; sleep 60'
	run "$KERN" exec codes -- sh -c 'exit 7'
	assert_status 7
	run "$KERN" exec codes -- sh -c 'kill -SEGV $$'
	assert_status 139
	run -127 --separate-stderr "$KERN" exec codes -- /no/such/cmd
	assert_status 127
	[ "${stderr_lines[0]}" = "kern: cannot start '/no/such/cmd' in box: No such file or directory (os error 2)" ]
	[[ ${stderr_lines[1]} == hint:* ]]
	run -127 --separate-stderr "$KERN" exec codes -w /no/such/dir -- true
	assert_status 127
	[[ ${stderr_lines[0]} =~ ^kern:\ cannot\ start\ \'true\'\ in\ box:\ No\ such\ file\ or\ directory ]]
	for _ in $(seq 50); do "$KERN" exec codes -- test -e /tmp/noexec && break; sleep 0.05; done
	run --separate-stderr "$KERN" exec codes -- /tmp/noexec
	assert_status 126
	[[ ${stderr_lines[0]} == "kern: cannot start '/tmp/noexec' in box: Permission denied (os error 13)" ]]
	# Looked up in the box's PATH; a script without #! is refused, never run by a shell.
	run -127 --separate-stderr "$KERN" exec codes -e PATH=/no/such:/tmp/p -- noshebang
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "kern: cannot start 'noshebang' in box: Exec format error (os error 8)" ]
	run --separate-stderr "$KERN" exec codes -e PATH=/no/such:/tmp:/bin -- noexec
	assert_status 126
}

@test "exec outcome bytes: 4 bytes when it entered (byte 3 = signal), none when refused or no box; alive pipe A then EOF, Ax on failure [rootless]" {
	kern_d bytes --rootfs "$(ROOTFS)" -- sleep 60
	with_fds "$KERN" exec bytes -- true
	assert_status 0
	[ "$(started_bytes)" = "1 0 0 0" ]
	[ "$(alive_bytes)" = A ]
	with_fds "$KERN" exec bytes -- sh -c 'kill -TERM $$'
	assert_status 143
	[ "$(started_bytes)" = "1 0 0 15" ]
	with_fds "$KERN" exec bytes -- sh -c 'exit 3'
	assert_status 3
	[ "$(started_bytes)" = "1 0 0 0" ]
	# a command that cannot start counts as started (box-cli.md §4,
	# outcome bytes)
	with_fds -127 "$KERN" exec bytes -- /missing
	assert_status 127
	[ "$(started_bytes)" = "1 0 0 0" ]
	[ "$(alive_bytes)" = Ax ]
	# refused: nothing written
	with_fds "$KERN" exec bytes -u nosuchuser -- true
	assert_status 126
	assert_line_re "^kern: exec: .* - refusing to run$"
	[ "$(started_bytes)" = "" ]
	[ "$(alive_bytes)" = Ax ]
	with_fds "$KERN" exec gone -- true
	assert_status 1
	[ "$(started_bytes)" = "" ]
	[ "$(alive_bytes)" = Ax ]
	# invalid descriptor values are ignored
	run env KERN_STARTED_FD=abc KERN_ALIVE_FD=999 "$KERN" exec bytes -- true
	assert_status 0
}

@test "exec KERN_ALIVE_FD reaches EOF when the command execs, not when it ends [rootless]" {
	kern_d alive --image host -- sleep 60
	fifo=$BATS_TEST_TMPDIR/alive.fifo
	mkfifo "$fifo"
	(cat "$fifo" >"$BATS_TEST_TMPDIR/alive.got"; now_ms >"$BATS_TEST_TMPDIR/alive.eof") &
	reader=$!
	t0=$(now_ms)
	KERN_ALIVE_FD=6 "$KERN" exec alive -- sleep 2 6>"$fifo"
	t1=$(now_ms)
	wait "$reader"
	eof=$(cat "$BATS_TEST_TMPDIR/alive.eof")
	echo "exec ran $((t1 - t0)) ms, EOF after $((eof - t0)) ms"
	[ "$(cat "$BATS_TEST_TMPDIR/alive.got")" = A ]
	[ $((t1 - t0)) -ge 2000 ]
	[ $((eof - t0)) -lt 1500 ]
}

@test "FD-1 via exec: the command sees only 0, 1 and 2 (no started, alive, namespace or inherited fds) [rootless]" {
	kern_d fds --image host -- sleep 60
	run env KERN_STARTED_FD=5 KERN_ALIVE_FD=6 "$KERN" exec fds -- sh -c 'ls /proc/$$/fd' \
		5>"$BATS_TEST_TMPDIR/s" 6>"$BATS_TEST_TMPDIR/a" 7</etc/hostname 9>"$BATS_TEST_TMPDIR/x"
	assert_status 0
	[ "$output" = "$(printf '0\n1\n2')" ]
}

# How many processes box NAME holds, seen by a kern exec of its own.
procs_in() {
	"$KERN" exec "$1" -- sh -c 'ls /proc | grep -c "^[0-9]"'
}

# procs_until NAME OP N: poll until the count satisfies OP N (test(1)), up
# to 15 s (on a loaded host each probe is itself a kern exec); print it.
procs_until() {
	local n end=$((SECONDS + 15))
	while :; do
		n=$(procs_in "$1")
		[ "$n" "$2" "$3" ] || [ "$SECONDS" -ge "$end" ] && break
		sleep 0.05
	done
	echo "$n"
}

@test "exec: signals to kern exec reach the command; SIGKILL of kern exec ends it [rootless]" {
	kern_d sig --image host -- sleep 60
	"$KERN" exec sig -- sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done' &
	ex=$!
	sleep 0.5
	kill -TERM "$ex"
	wait "$ex" && st=0 || st=$?
	[ "$st" -eq 42 ]
	base=$(procs_in sig)
	"$KERN" exec sig -- sleep 61 &
	ex=$!
	# The second exec is in the box once its command shows (a loaded host
	# can take longer than any fixed pause to start it).
	n=$(procs_until sig -gt "$base")
	[ "$n" -gt "$base" ]
	kill -9 "$ex"
	wait "$ex" 2>/dev/null || true
	n=$(procs_until sig -le "$base")
	[ "$n" -le "$base" ]
}

@test "exec refuses a record with a malformed seccomp mode: 126, refusal line, no bytes [rootless]" {
	kern_d badsc --image host -- sleep 60
	rec=$(runtime_dir)/instances/badsc
	sed -i 's/^seccomp\t.*/seccomp\tnone/' "$rec"
	with_fds "$KERN" exec badsc -- true
	assert_status 126
	assert_line_re "^kern: exec: .*seccomp.* - refusing to run$"
	[ "$(started_bytes)" = "" ]
	[ "$(alive_bytes)" = Ax ]
}

@test "exec into a box still starting waits for its PID 1; into a box that just ended says no running box [rootless]" {
	"$KERN" box slow --image host -- sh -c 'sleep 60' &
	fg=$!
	run "$KERN" exec slow -- hostname
	# either the box was not registered yet (1) or exec waited for it (0)
	if [ "$status" -eq 0 ]; then [ "$output" = slow ]; else assert_line_re "no running box named 'slow'"; fi
	"$KERN" stop -t 0 slow || true
	wait "$fg" || true
	run "$KERN" exec slow -- true
	assert_status 1
}

# ---- the box's recorded lockdown (needs lib/lockdown/lockdown.c) ----

@test "CAP-5: kern exec into a --cap-drop ALL box has CapEff 0 (the recorded set, not the baseline) [rootless]" {
	require_lockdown
	kern_d nocaps --image host --cap-drop ALL -- sleep 60
	kern_d defcaps --image host -- sleep 60
	run "$KERN" exec nocaps -- awk '/^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):/ {print $1, $2}' /proc/self/status
	assert_status 0
	assert_line_re '^CapEff: 0000000000000000$'
	assert_line_re '^CapPrm: 0000000000000000$'
	assert_line_re '^CapBnd: 0000000000000000$'
	assert_line_re '^NoNewPrivs: 1$'
	assert_line_re '^Seccomp: 2$'
	# control: the default box keeps its default set
	run "$KERN" exec defcaps -- awk '/^CapEff:/ {print $2}' /proc/self/status
	[ "$output" != 0000000000000000 ]
}

@test "SC-10: kern exec reuses the box's recorded seccomp mode [rootless]" {
	require_lockdown
	# migrate_pages (x86_64 256) is ENOSYS under the allowlist and reaches
	# the kernel under the denylist (which answers something else).
	[ "$(uname -m)" = x86_64 ] || skip "the probe syscall number is x86_64's"
	probe='import ctypes,os; l=ctypes.CDLL(None,use_errno=True); l.syscall(256,0,0,0,0); print(ctypes.get_errno())'
	KERN_SECCOMP=denylist kern_d deny --image host -- sleep 60
	kern_d allow --image host -- sleep 60
	[ "$(box_field deny seccomp)" = denylist ]
	run "$KERN" exec allow -- python3 -c "$probe"
	[ "$output" = 38 ]
	# the caller's KERN_SECCOMP is not what exec uses: the record is
	run env KERN_SECCOMP=denylist "$KERN" exec allow -- python3 -c "$probe"
	[ "$output" = 38 ]
	run "$KERN" exec deny -- python3 -c "$probe"
	[ "$output" != 38 ]
	[ -n "$output" ]
}

@test "exec -u resolves names in the box's own /etc/passwd and /etc/group [rootless]" {
	require_lockdown
	is_root && ! grep -q '^root:' /etc/subuid 2>/dev/null && skip "root has no subordinate id range here, so a box maps only uid 0 (see the refusal test)"
	kern_d users --rootfs "$(ROOTFS)" --uid-range -- sleep 60
	run "$KERN" exec users -u app -- id
	assert_status 0
	[[ $output == "uid=1000(app) gid=1000(app)"*"50(staff)"* ]]
	run "$KERN" exec users -u 1000:50 -- id -g
	[ "$output" = 50 ]
	run "$KERN" exec users -u app -- awk '/^CapEff:/ {print $2}' /proc/self/status
	[ "$output" = 0000000000000000 ]
	run "$KERN" exec users -- id -u
	[ "$output" = 0 ]
}

@test "exec -u of a uid the box cannot map is refused with 126 [rootless]" {
	require_lockdown
	kern_d single --rootfs "$(ROOTFS)" --no-uid-range -- sleep 60
	with_fds "$KERN" exec single -u app -- id
	assert_status 126
	assert_line_re "^kern: exec: .* - refusing to run$"
	[ "$(started_bytes)" = "" ]
}

@test "CG-10: a memory hog started by kern exec hits the box's cap [rootless]" {
	kern_d hog --image host --memory 64m -- sleep 60
	with_fds "$KERN" exec hog -- true
	b=($(started_bytes))
	[ "${b[1]}" = 1 ] || skip "the box's memory cap is not enforced on this host/build (byte 1 = ${b[1]})"
	with_fds "$KERN" exec hog -- python3 -c 'b = bytearray(256 << 20); print(len(b))'
	echo "status $status bytes $(started_bytes)"
	assert_status 137
	b=($(started_bytes))
	[ "${b[2]}" = 1 ]
	[ "${b[3]}" = 9 ]
	assert_line_re "killed by the kernel's OOM killer"
}
