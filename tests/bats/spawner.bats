#!/usr/bin/env bats
# kern spawner (man/kern-spawner.1): the protocol the Node package starts
# kern through, and what hostile input gets.
load helper

setup() {
	kern_private_dirs
	T=$BATS_TEST_TMPDIR
	ENVC=0
}

# req FIELD...: one request (length line and NUL-ended fields) on stdout.
req() {
	local f
	f=$(mktemp "$T/body.XXXXXX")
	printf '%s\0' "$@" >"$f"
	printf '%d\n' "$(stat -c %s "$f")"
	cat "$f"
}
# spawn ID FD0 FD1 FD2 FD3 FD4 CWD FILE ARG...: a spawn request with the
# environment in the array SPAWN_ENV.
spawn() {
	local id=$1 cwd=$7 file=$8
	local fds=("$2" "$3" "$4" "$5" "$6")
	shift 8
	req spawn "$id" "${fds[@]}" "$cwd" "$(($# + 1))" "${#SPAWN_ENV[@]}" "$file" "$file" "$@" "${SPAWN_ENV[@]}"
}
SPAWN_ENV=(PATH=/usr/bin:/bin)

# Every line the spawner writes is the greeting or one reply.
assert_protocol_lines() {
	local l LC_ALL=C # echoed bytes need not be UTF-8
	for l in "${lines[@]}"; do
		[[ $l =~ ^(kern-spawner\ 1|[SFX]\ [A-Za-z0-9][A-Za-z0-9_.-]*\ .+|E\ .+)$ ]] || {
			echo "not a reply: '$l'"
			return 1
		}
	done
}

@test "spawner: greets, starts a process with the given descriptors, reports its start and exit [rootless]" {
	: >"$T/out"
	run --separate-stderr "$KERN" spawner < <(spawn a1 - "$T/out" - - - - /bin/echo hi)
	assert_status 0
	[ -z "$stderr" ]
	[ "${lines[0]}" = "kern-spawner 1" ]
	[[ ${lines[1]} =~ ^S\ a1\ [0-9]+$ ]]
	[ "${lines[2]}" = "X a1 exit 0" ]
	[ "${#lines[@]}" = 3 ]
	[ "$(cat "$T/out")" = hi ]
}

@test "spawner: exit statuses and signals are reported as such [rootless]" {
	run "$KERN" spawner < <(
		spawn e - - - - - - /bin/sh -c 'exit 7'
		spawn k - - - - - - /bin/sh -c 'kill -9 $$'
	)
	assert_status 0
	assert_line_re '^X e exit 7$'
	assert_line_re '^X k signal 9$'
}

@test "spawner: the child gets exactly its environment, cwd, a session, no blocked signal, fds 3-4 as asked [rootless]" {
	: >"$T/out"
	: >"$T/three"
	mkdir "$T/dir"
	SPAWN_ENV=(PATH=/usr/bin:/bin FOO='a b=c')
	# shellcheck disable=SC2016
	run "$KERN" spawner < <(spawn c - "$T/out" - "$T/three" - "$T/dir" /bin/sh -c '
		env | sort
		pwd
		set -- $(cat /proc/$$/stat); [ "$6" = $$ ] && echo session
		echo to-three >&3
		[ -e /proc/$$/fd/4 ] || echo four-closed')
	assert_status 0
	assert_line_re '^X c exit 0$'
	run cat "$T/out"
	[ "${lines[0]}" = "FOO=a b=c" ]
	[ "${lines[1]}" = "PATH=/usr/bin:/bin" ]
	[ "${lines[2]}" = "PWD=$T/dir" ] || [ "${lines[2]}" = "$T/dir" ]
	assert_line_re "^$T/dir\$"
	assert_line_re '^session$'
	assert_line_re '^four-closed$'
	[ "$(cat "$T/three")" = to-three ]
	# No signal blocked or ignored (the shell above blocks them while it
	# waits, so a program that does neither reads its own status).
	: >"$T/sig"
	run "$KERN" spawner < <(spawn s - "$T/sig" - - - - /bin/grep -E '^Sig(Blk|Ign):' /proc/self/status)
	assert_line_re '^X s exit 0$'
	run cat "$T/sig"
	assert_line_re '^SigBlk:[[:space:]]+0+$'
	assert_line_re '^SigIgn:[[:space:]]+0+$'
}

@test "spawner: a FIFO with a reader is opened, one without is refused at once and the next request still runs [rootless]" {
	mkfifo "$T/with" "$T/without"
	exec 6<>"$T/with" # a reader (and a writer, so opening it never blocks here)
	run timeout 10 "$KERN" spawner < <(
		spawn w - "$T/with" - - - - /bin/echo through
		spawn n - "$T/without" - - - - /bin/echo never
		spawn after - - - - - - /bin/true
	)
	assert_status 0
	assert_line_re '^X w exit 0$'
	assert_line_re "^F n open fd 1 $T/without: No such device or address\$"
	assert_line_re '^X after exit 0$'
	read -r -t 5 -u 6 got
	exec 6<&-
	[ "$got" = through ]
}

@test "spawner: a long child never holds up the others; at end of input it waits for and reports them [rootless]" {
	run timeout 20 "$KERN" spawner < <(
		spawn slow - - - - - - /bin/sleep 2
		spawn quick - - - - - - /bin/true
	)
	assert_status 0
	[ "${lines[0]}" = "kern-spawner 1" ]
	[[ ${lines[1]} =~ ^S\ slow\  ]]
	[[ ${lines[2]} =~ ^S\ quick\  ]]
	[ "${lines[3]}" = "X quick exit 0" ]
	[ "${lines[4]}" = "X slow exit 0" ]
}

@test "spawner: a program that cannot be run or a descriptor that cannot be opened is one F line [rootless]" {
	echo 'not a program' >"$T/noexec"
	chmod 644 "$T/noexec"
	run "$KERN" spawner < <(
		spawn nofile - - - - - - /nonexistent/prog
		spawn noexec - - - - - - "$T/noexec"
		spawn nopath - /nonexistent/out - - - - /bin/true
		spawn nocwd - - - - - /nonexistent /bin/true
	)
	assert_status 0
	assert_line_re '^F nofile spawn /nonexistent/prog: No such file or directory$'
	assert_line_re "^F noexec spawn $T/noexec: Permission denied\$"
	assert_line_re '^F nopath open fd 1 /nonexistent/out: No such file or directory$'
	assert_line_re '^F nocwd spawn /bin/true: No such file or directory$'
	[ "$(grep -c '^[SX] ' <<<"$output")" = 0 ]
}

@test "spawner: hostile fields get one line each, nothing runs, and the next request is answered [rootless]" {
	long_id=$(printf 'a%.0s' {1..33})
	run "$KERN" spawner < <(
		req frob x
		req $'fr\nob\x1b' x
		req spawn '../x' - - - - - - 1 0 /bin/true true
		req spawn "$long_id" - - - - - - 1 0 /bin/true true
		req spawn
		req spawn few - -
		req spawn rel - out - - - - 1 0 /bin/true true
		req spawn cwd - - - - - rel 1 0 /bin/true true
		req spawn argc0 - - - - - - 0 0 /bin/true
		req spawn argcx - - - - - - 1x 0 /bin/true true
		req spawn argcbig - - - - - - 99999999999999999999999 0 /bin/true true
		req spawn argcmore - - - - - - 5 0 /bin/true true
		req spawn extra - - - - - - 1 0 /bin/true true junk
		req spawn envbad - - - - - - 1 1 /bin/true true NOEQUALS
		req spawn enveq - - - - - - 1 1 /bin/true true =x
		req spawn nofile - - - - - - 1 0 '' true
		printf '3\nabc'
		printf '0\n'
		spawn ok - - - - - - /bin/true
	)
	assert_status 0
	assert_protocol_lines
	assert_line_re "^E bad request: unknown verb 'frob'\$"
	assert_line_re "^E bad request: unknown verb 'fr\\?ob\\?'\$"
	[ "$(grep -c '^E bad request: the id must be' <<<"$output")" = 3 ]
	for id in few rel cwd argc0 argcx argcbig argcmore extra envbad enveq nofile; do
		assert_line_re "^F $id bad request: "
	done
	[ "$(grep -c '^E bad request: it must be NUL-terminated' <<<"$output")" = 2 ]
	[ "$(grep -c '^S ' <<<"$output")" = 1 ]
	assert_line_re '^S ok [0-9]+$'
	assert_line_re '^X ok exit 0$'
}

@test "spawner: a broken length line or input cut short is one E line, then it reads no more and exits 1 [rootless]" {
	# A good request after the bad one is never answered ('10\nabc' is cut
	# short by the end of input).
	for input in 'abc\n' '12345678\n' '4194305\n' '-1\n' '\n' 'xxxxxxxxxxxxxxxxxxxxxxxx' '10\nabc'; do
		run --separate-stderr "$KERN" spawner < <(
			printf -- "$input"
			[ "$input" = '10\nabc' ] || spawn after - - - - - - /bin/true
		)
		assert_status 1
		[ "${lines[0]}" = "kern-spawner 1" ]
		[[ ${lines[1]} =~ ^E\ (bad\ length|cut\ short):\  ]] || { echo "input '$input': ${lines[1]}"; false; }
		[ "${#lines[@]}" = 2 ]
		[[ $stderr == "error: sandbox: spawner: "* ]]
	done
}

@test "spawner: the largest request is read whole, one byte more is refused [rootless]" {
	body=$T/big
	head -c $((4 * 1024 * 1024 - 1)) /dev/zero | tr '\0' A >"$body"
	printf '\0' >>"$body"
	run "$KERN" spawner < <(printf '%d\n' $((4 * 1024 * 1024)); cat "$body"; spawn after - - - - - - /bin/true)
	assert_status 0
	assert_line_re "^E bad request: unknown verb '$(printf 'A%.0s' {1..32})'\$"
	assert_line_re '^X after exit 0$'
	run "$KERN" spawner < <(printf '300000\n'; head -c 300000 /dev/zero; spawn after - - - - - - /bin/true)
	assert_status 0
	assert_line_re '^E bad request: more than 262144 fields$'
	assert_line_re '^X after exit 0$'
	run "$KERN" spawner < <(printf '%d\n' $((4 * 1024 * 1024 + 1)); cat "$body"; printf '\0')
	assert_status 1
	assert_line_re '^E bad length: '
}

@test "spawner: random bytes and randomly filled frames never crash it [rootless]" {
	for i in 1 2 3 4 5; do
		head -c 65536 /dev/urandom >"$T/noise"
		run --separate-stderr timeout 10 "$KERN" spawner <"$T/noise"
		[ "$status" = 0 ] || [ "$status" = 1 ] || { echo "raw noise $i: status $status"; false; }
		assert_protocol_lines
	done
	# Well-framed bodies of random fields, some with the spawn verb and the
	# right field count: each gets its line, nothing starts.
	{
		for i in $(seq 1 200); do
			f=$T/frame
			{
				[ $((i % 2)) = 0 ] && printf 'spawn\0id%d\0' "$i"
				head -c $((RANDOM % 200)) /dev/urandom
				printf '\0'
			} >"$f"
			printf '%d\n' "$(stat -c %s "$f")"
			cat "$f"
		done
	} >"$T/frames"
	run timeout 20 "$KERN" spawner <"$T/frames"
	assert_status 0
	assert_protocol_lines
	[ "$(grep -c '^[EF] ' <<<"$output")" = 200 ]
}

@test "spawner: takes no arguments [rootless]" {
	run --separate-stderr "$KERN" spawner extra
	assert_status 1
	[ -z "$output" ]
	[[ $stderr == "error: sandbox: kern spawner takes no arguments" ]]
}

@test "spawner: dies with the process that started it; what it started runs on [rootless]" {
	mkfifo "$T/in"
	exec 5<>"$T/in" # input stays open: only the parent's death ends it
	: >"$T/out"
	spawn s - "$T/out" - - - - /bin/sh -c 'echo $$; exec sleep 30' >&5
	# shellcheck disable=SC2016
	sh -c '"$1" spawner <"$2" >"$3.replies" & echo $! >"$3.pid"; wait' sh "$KERN" "$T/in" "$T/sp" 3>&- &
	parent=$!
	for _ in $(seq 1 100); do [ -s "$T/out" ] && break; sleep 0.05; done
	child=$(cat "$T/out")
	spawner=$(cat "$T/sp.pid")
	kill -0 "$spawner"
	kill -9 "$parent"
	for _ in $(seq 1 100); do kill -0 "$spawner" 2>/dev/null || break; sleep 0.05; done
	exec 5>&-
	! kill -0 "$spawner" 2>/dev/null || false
	kill -0 "$child"
	kill -9 "$child"
}
