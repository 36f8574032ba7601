#!/usr/bin/env bats
# kern box: the CLI contract (security-tests.md section 1).
load helper

setup() { kern_private_dirs; }

@test "CLI-2: kern box --help has --security-profile <untrusted> with exactly {untrusted} [rootless]" {
	run --separate-stderr "$KERN" box --help
	assert_status 0
	[[ $output == *"--security-profile <untrusted>"* ]]
	set=$(grep -o -- '--security-profile <[^>]*>' <<<"$output" | head -1 | sed 's/.*<\(.*\)>/\1/')
	[ "$set" = untrusted ]
}

@test "CLI-3: unknown flag, second bare token and bad names exit 1 with error: box: and touch nothing [rootless]" {
	rm -rf "$XDG_RUNTIME_DIR"
	run --separate-stderr "$KERN" box n1 --frob -- true
	assert_status 1
	[ "$stderr" = "error: box: unknown flag '--frob'" ]
	run --separate-stderr "$KERN" box n1 stray --image host -- true
	assert_status 1
	[ "$stderr" = "error: box: unexpected argument 'stray' (did you forget \`--\` before the command?)" ]
	for bad in .x a/b "$(printf 'x%.0s' {1..65})" '_x'; do
		run --separate-stderr "$KERN" box "$bad" --image host -- true
		assert_status 1
		[[ $stderr == "error: box: "* ]]
	done
	run --separate-stderr "$KERN" box -x --image host -- true
	assert_status 1
	[[ $stderr == "error: box: unknown flag '-x'" ]]
	[ ! -e "$XDG_RUNTIME_DIR" ]
	[ -z "$output" ]
}

@test "CLI-4: every flag parses in = and space forms and shows in --show-config [rootless]" {
	forms=(
		"--image|host|image: host"
		"--workdir|/w|workdir: /w"
		"-w|/w2|workdir: /w2"
		"--user|1000:50|user: 1000:50"
		"-u|app|user: app"
		"--memory|256m|memory: 268435456"
		"-m|536870912|memory: 536870912"
		"--cpus|0.5|cpus: 0.5"
		"--pids-limit|64|pids_limit: 64"
		"--timeout|30|timeout: 30"
		"--security-profile|untrusted|security_profile: untrusted"
		"--network|host|network: host"
		"--egress-allow|pypi.org,files.example.com|egress_allow: pypi.org,files.example.com"
		"--tmpfs|/tmp:64m|tmpfs: [{\"path\": \"/tmp\", \"size\": 67108864}]"
		"-v|/srv/a:/a:ro|mounts: [{\"src\": \"/srv/a\", \"dst\": \"/a\", \"ro\": true}]"
		"--mount|type=bind,src=/srv/b,dst=/b|mounts: [{\"src\": \"/srv/b\", \"dst\": \"/b\", \"ro\": false}]"
		"--env|K=V|env_keys: [\"K\"]"
		"-e|K2=V|env_keys: [\"K2\"]"
		"--label|a=b|labels: {\"a\": \"b\"}"
		"--cap-drop|NET_RAW|cap_drop: NET_RAW"
		"--cap-add|CHOWN|cap_add: CHOWN"
	)
	for f in "${forms[@]}"; do
		IFS='|' read -r flag val want <<<"$f"
		extra=(--image host)
		[ "$flag" = --image ] && extra=()
		run "$KERN" box cfg "${extra[@]}" "$flag" "$val" --show-config -- true
		assert_status 0
		grep -qxF -- "$want" <<<"$output" || { echo "$flag $val: no line '$want' in:"; echo "$output"; return 1; }
		if [[ $flag == --* ]]; then
			run "$KERN" box cfg "${extra[@]}" "$flag=$val" --show-config -- true
			assert_status 0
			grep -qxF -- "$want" <<<"$output" || { echo "$flag=$val: no '$want'"; echo "$output"; return 1; }
		fi
	done
	for bare in "--ro|read_only: true" "--read-only|read_only: true" "--net|network: host" \
		    "--net none|network: none" "--require-limits|name: cfg" "--init|name: cfg" \
		    "-q|name: cfg" "--no-uid-range|name: cfg" "--uid-range|name: cfg"; do
		IFS='|' read -r flag want <<<"$bare"
		run "$KERN" box cfg --image host $flag --show-config -- true
		assert_status 0
		grep -qxF -- "$want" <<<"$output" || { echo "$flag: no '$want'"; echo "$output"; return 1; }
	done
}

@test "CLI-5: --show-config is byte-identical twice and has no side effects [rootless]" {
	rm -rf "$XDG_RUNTIME_DIR" "$XDG_CACHE_HOME"
	a=$("$KERN" box same --image host -m 64m --label x=y -e SECRET=hunter2 --show-config -- python3 -c 'print(1)')
	b=$("$KERN" box same --image host -m 64m --label x=y -e SECRET=hunter2 --show-config -- python3 -c 'print(1)')
	[ "$a" = "$b" ]
	[[ $a == *'command: ["python3", "-c", "print(1)"]'* ]]
	[[ $a == *'seccomp_denied_syscalls: 35'* ]]
	[[ $a != *hunter2* ]]
	[ ! -e "$XDG_RUNTIME_DIR" ]
	[ ! -e "$XDG_CACHE_HOME" ]
	keys=$(cut -d: -f1 <<<"$a" | tr '\n' ' ')
	[ "$keys" = "name image command workdir user read_only network egress_allow memory cpus pids_limit timeout seccomp seccomp_denied_syscalls cap_drop cap_add security_profile tmpfs mounts env_keys labels profiles " ]
}

@test "CLI-6: exit codes: own status, SIGSEGV, missing and non-executable command [rootless]" {
	run "$KERN" box e1 --image host -- sh -c 'exit 3'
	assert_status 3
	run --separate-stderr env KERN_STARTED_FD=3 "$KERN" box e2 --image host -- sh -c 'kill -SEGV $$' 3>"$BATS_TEST_TMPDIR/o"
	assert_status 139
	[ "$(outcome "$BATS_TEST_TMPDIR/o")" = "1 0 0 11" ]
	run -127 --separate-stderr "$KERN" box e3 --image host -- no-such-command-xyz
	assert_status 127
	[ "${stderr_lines[0]}" = "kern: cannot start 'no-such-command-xyz' in box: No such file or directory (os error 2)" ]
	[[ ${stderr_lines[1]} == hint:* ]]
	run --separate-stderr "$KERN" box e4 --image host -- /etc/passwd
	assert_status 126
	[ "${stderr_lines[0]}" = "kern: cannot start '/etc/passwd' in box: Permission denied (os error 13)" ]
	[[ ${stderr_lines[1]} == hint:* ]]
}

@test "CLI-6: the command is looked up in the box's PATH: a non-executable match is passed over, a script without #! is not run by a shell [rootless]" {
	d=$BATS_TEST_TMPDIR
	mkdir -p "$d/a" "$d/b" "$d/c"
	printf '#!/bin/sh\necho from-b\n' >"$d/b/mycmd"
	printf 'echo ran-by-a-shell\n' >"$d/c/mycmd"
	cp "$d/b/mycmd" "$d/a/mycmd"
	chmod 0644 "$d/a/mycmd"
	chmod 0755 "$d/b/mycmd" "$d/c/mycmd"
	chmod -R a+rX "$d"
	binds=(-v "$d/a:/pa:ro" -v "$d/b:/pb:ro" -v "$d/c:/pc:ro")
	run --separate-stderr "$KERN" box p1 -q --image host "${binds[@]}" -e PATH=/no/such:/pa:/pb -- mycmd
	assert_status 0
	[ "$output" = from-b ]
	run --separate-stderr "$KERN" box p2 -q --image host "${binds[@]}" -e PATH=/no/such:/pa -- mycmd
	assert_status 126
	[ "${stderr_lines[0]}" = "kern: cannot start 'mycmd' in box: Permission denied (os error 13)" ]
	# An empty entry is the working directory.
	run --separate-stderr "$KERN" box p3 -q --image host "${binds[@]}" -w /pb -e PATH=/no/such: -- mycmd
	assert_status 0
	[ "$output" = from-b ]
	run -127 --separate-stderr "$KERN" box p4 -q --image host "${binds[@]}" -e PATH=/pc:/pb -- mycmd
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "kern: cannot start 'mycmd' in box: Exec format error (os error 8)" ]
	[[ ${stderr_lines[1]} == "hint: the file is no program this kernel runs"* ]]
}

@test "CLI-6: a bind target through a symlink fails at mount time with 125 [rootless]" {
	r=$(mkrootfs)
	ln -sfn /etc "$r/lnk"
	run --separate-stderr "$KERN" box e5 --rootfs "$r" -v "$BATS_TEST_TMPDIR:/lnk/x" -- true
	assert_status 125
	[[ ${stderr_lines[0]} == "kern: sandbox setup failed: "*symlink* ]]
	no_leftovers e5
}

@test "CLI-6: a bad image reference exits 1 with error: image: [rootless]" {
	run --separate-stderr "$KERN" box e6 --image 'UP/per' -- true
	assert_status 1
	[[ $stderr == "error: image: bad image reference 'UP/per': "* ]]
}

@test "CLI-7: a box running true writes nothing on stdout and only kern-class lines on stderr [rootless]" {
	run --separate-stderr "$KERN" box q1 --image host -m 64m --uid-range -- true
	assert_status 0
	[ -z "$output" ]
	while IFS= read -r l; do
		[ -n "$l" ] || continue
		[[ $l =~ ^(kern:\ note:|kern:\ warning:|hint:) ]] || { echo "stray line: $l"; return 1; }
	done <<<"$stderr"
}

@test "CLI-8: KERN_QUIET and -q silence notes and warnings but not fatal lines [rootless]" {
	run --separate-stderr env KERN_QUIET=1 "$KERN" box q2 --image host -m 64m --uid-range -- true
	assert_status 0
	[ -z "$stderr" ]
	run --separate-stderr "$KERN" box q3 -q --image host -m 64m --uid-range -- true
	assert_status 0
	[ -z "$stderr" ]
	run -127 --separate-stderr env KERN_QUIET=1 "$KERN" box q4 --image host -- nope-cmd
	assert_status 127
	[[ $stderr == "kern: cannot start 'nope-cmd'"* ]]
}

@test "CLI-9: KERN_STARTED_FD gets 4 bytes only for a started box; invalid values are ignored [rootless]" {
	o=$BATS_TEST_TMPDIR/o
	KERN_STARTED_FD=3 "$KERN" box s1 --image host -- true 3>"$o"
	[ "$(outcome "$o")" = "1 0 0 0" ]
	KERN_STARTED_FD=3 "$KERN" box s2 --image host -- nope 3>"$o" 2>/dev/null || true
	[ "$(outcome "$o")" = "1 0 0 0" ]
	: >"$o"; KERN_STARTED_FD=3 "$KERN" box s3 --bogus 3>"$o" 2>/dev/null || true
	[ ! -s "$o" ]
	: >"$o"; KERN_STARTED_FD=3 "$KERN" box s4 --image host --show-config 3>"$o" >/dev/null
	[ ! -s "$o" ]
	: >"$o"; KERN_STARTED_FD=3 "$KERN" box s5 --rootfs /nonexistent-root -- true 3>"$o" 2>/dev/null || true
	[ ! -s "$o" ]
	r=$(mkrootfs); ln -sfn /etc "$r/lnk"
	: >"$o"; KERN_STARTED_FD=3 "$KERN" box s6 --rootfs "$r" -v "$BATS_TEST_TMPDIR:/lnk/x" -- true 3>"$o" 2>/dev/null || true
	[ ! -s "$o" ]
	for v in 1 999 abc; do
		run env KERN_STARTED_FD=$v "$KERN" box s7 --image host -- sh -c 'exit 5'
		assert_status 5
	done
}

@test "CLI-10: KERN_ALIVE_FD: A then EOF at exec; A then x on failures [rootless]" {
	p=$BATS_TEST_TMPDIR/alive
	KERN_ALIVE_FD=3 "$KERN" box a1 --image host -- sleep 0.2 3>"$p"
	[ "$(cat "$p")" = A ]
	KERN_ALIVE_FD=3 "$KERN" box a2 --image host -- nope 3>"$p" 2>/dev/null || true
	[ "$(cat "$p")" = Ax ]
	KERN_ALIVE_FD=3 "$KERN" box a3 --frob 3>"$p" 2>/dev/null || true
	[ "$(cat "$p")" = Ax ]
	r=$(mkrootfs); ln -sfn /etc "$r/lnk"
	KERN_ALIVE_FD=3 "$KERN" box a4 --rootfs "$r" -v "$BATS_TEST_TMPDIR:/lnk/x" -- true 3>"$p" 2>/dev/null || true
	[ "$(cat "$p")" = Ax ]
	# The pipe reaches EOF exactly at the workload's exec: a reader sees EOF
	# while the workload still runs.
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	KERN_ALIVE_FD=5 "$KERN" box a5 --image host -- sleep 3 5>"$BATS_TEST_TMPDIR/fifo" &
	kpid=$!
	start=$(date +%s%N)
	got=$(cat "$BATS_TEST_TMPDIR/fifo")
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	kill -0 "$kpid"
	wait "$kpid"
	[ "$got" = A ]
	[ "$ms" -lt 2500 ]
}

@test "CLI-11: the host environment never reaches the box [rootless]" {
	run env HOST_SECRET=x KERN_SCOPE=1 KERN_DIRECT_CAPS=1 KERN_BIN=/x "$KERN" box h1 --image host -- env
	assert_status 0
	refute_line_re 'HOST_SECRET|KERN_'
	assert_line_re '^PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$'
	assert_line_re '^HOME=/root$'
	assert_line_re '^TERM=xterm$'
	assert_line_re '^HOSTNAME=h1$'
}

@test "CLI-12: --env-file values are verbatim, fd sources work and are closed, bad files refused [rootless]" {
	f=$BATS_TEST_TMPDIR/env
	printf '# comment\n\nA=1=2\nB= spaced value \nC=\nKERN_X=y\n' >"$f"
	run "$KERN" box f1 --image host --env-file "$f" -e C=override -- env
	assert_status 0
	assert_line_re '^A=1=2$'
	assert_line_re '^B= spaced value $'
	assert_line_re '^C=override$'
	assert_line_re '^KERN_X=y$'
	run "$KERN" box f2 --image host --env-file /proc/self/fd/7 -- sh -c 'env; ls /proc/self/fd' 7<"$f"
	assert_status 0
	assert_line_re '^A=1=2$'
	refute_line_re '^7$'
	printf 'A=1\nnoequals\n' >"$f"
	run --separate-stderr "$KERN" box f3 --image host --env-file "$f" -- true
	assert_status 1
	[[ $stderr == "error: box: --env-file: "*"line 2"* ]]
	printf '=x\n' >"$f"
	run "$KERN" box f4 --image host --env-file "$f" -- true
	assert_status 1
	mkdir -p "$XDG_RUNTIME_DIR/kern"; echo A=1 >"$XDG_RUNTIME_DIR/kern/e"
	run --separate-stderr "$KERN" box f5 --image host --env-file "$XDG_RUNTIME_DIR/kern/e" -- true
	assert_status 1
	[[ $stderr == *"inside kern's own state"* ]]
}

@test "CLI-15: the same NAME started twice concurrently: one runs, the other exits 1 [rootless]" {
	"$KERN" box dup --image host -- sleep 2 &
	pid=$!
	sleep 0.5
	run --separate-stderr "$KERN" box dup --image host -- true
	assert_status 1
	[ "$stderr" = "error: box: a box named 'dup' is already running" ] || [[ ${stderr_lines[0]} == "error: box: a box named 'dup' is already running" ]]
	wait $pid
	run "$KERN" box dup --image host -- true
	assert_status 0
}
