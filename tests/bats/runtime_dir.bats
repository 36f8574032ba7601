#!/usr/bin/env bats
# Where kern keeps its runtime state without XDG_RUNTIME_DIR (issue 16:
# on a memory filesystem first), what it does when another user holds a
# name it would use (security-tests.md OT-8), and boxes an older kern
# recorded under /tmp/kern-<uid>. The root tests use an unprivileged
# victim uid with no other state on this host (setpriv), and private
# tmpfs mounts over /run and /dev/shm where they need a clean host, so
# real users' runtime directories are never touched.
load helper

U=4243
started=()

# Root tests: the victim, its home, and no state of its anywhere.
victim_setup() {
	require_root
	d=$(mktemp -d /tmp/kern-rtdir.XXXXXX)
	chmod 755 "$d"
	install -d -o $U -g $U "$d/home"
	rm -rf "/tmp/kern-$U" "/dev/shm/kern-$U"
	victim=(setpriv --reuid=$U --regid=$U --clear-groups env -i PATH=/usr/bin:/bin HOME="$d/home")
	"${victim[@]}" "$KERN" --version >/dev/null 2>&1 ||
		skip "uid $U cannot run $KERN (the tree is not world-readable; tests/run makes a readable copy)"
}

teardown() {
	# A legacy box a failed test left: its supervisor, from its record.
	for n in "${legacy_started[@]}"; do
		sup=$(awk -F'\t' '$1 == "supervisor" { print $2 }' "$legacy/instances/$n" 2>/dev/null)
		[ -z "$sup" ] || kill -KILL "$sup" 2>/dev/null || true
	done
	# The legacy test's runtime directory, when it made it.
	[ -z "${legacy_made:-}" ] || rm -rf "$legacy"
	[ -n "${victim:-}" ] || return 0
	for n in "${started[@]}"; do "${victim[@]}" "$KERN" stop "$n" >/dev/null 2>&1 || true; done
	rm -rf "/tmp/kern-$U" "/dev/shm/kern-$U" "${d:-/nonexistent}"
}
legacy_started=()

# box NAME [-d]: a host-image box of the victim's; stderr in $stderr.
box() {
	run --separate-stderr "${victim[@]}" "$KERN" box "$1" "${@:2}" --allow-uncapped --image host -- sleep "${SLEEP:-0}"
}

@test "issue 16: without XDG_RUNTIME_DIR an unprivileged caller's state is /dev/shm/kern-<uid> (tmpfs), with no note" {
	victim_setup
	box plain
	assert_status 0
	[ -z "$stderr" ]
	[ "$(stat -c '%u %a' "/dev/shm/kern-$U")" = "$U 700" ]
	[ "$(stat -f -c %T "/dev/shm/kern-$U")" = tmpfs ]
	[ -d "/dev/shm/kern-$U/instances" ]
	[ ! -e "/tmp/kern-$U" ]
}

# In a private mount namespace with a fresh tmpfs on /dev/shm (and on /run
# when RUN=tmpfs; otherwise the host's /run, or a ramfs where the host's
# is a tmpfs: a /run that is not one), for each caller: the directory the
# plan names, then a real box's state there: "LABEL DIR UID MODE FSTYPE".
in_private_ns() {
	local script
	script=$(
		cat <<'EOF'
set -eu
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
if [ "$RUN" = tmpfs ]; then mount -t tmpfs -o mode=755 tmpfs /run
elif [ "$(stat -f -c %T /run)" = tmpfs ]; then mount -t ramfs -o mode=755 ramfs /run; fi
mkdir -p /run/user
[ -z "${RUN_USER:-}" ] || install -d -o "$RUN_USER" -g "$RUN_USER" -m 700 "/run/user/$RUN_USER"
where() { # LABEL CMD...
	local label=$1 dir
	shift
	dir=$("$@" "$KERN" box p --plan --allow-uncapped --image host -- true | sed -n 's/.*--runtime \([^ ]*\) .*/\1/p')
	"$@" "$KERN" box p --allow-uncapped --image host -- true
	echo "$label $dir $(stat -c '%u %a' "$dir") $(stat -f -c %T "$dir") $(ls "$dir/instances" >/dev/null && echo ok)"
}
EOF
	)
	unshare -m --propagation private bash -c "$script
$1"
}

@test "issue 16: the candidates in order: XDG_RUNTIME_DIR, /run/user/<uid>, /run/kern (root, tmpfs /run), /dev/shm/kern-<uid>" {
	victim_setup
	export KERN U RUN RUN_USER
	v="${victim[*]}"
	# /run on tmpfs: root gets /run/kern; the victim cannot write /run.
	RUN=tmpfs RUN_USER=
	run in_private_ns "where root env -u XDG_RUNTIME_DIR; where victim $v"
	assert_status 0
	[ "${lines[0]}" = "root /run/kern 0 700 tmpfs ok" ]
	[ "${lines[1]}" = "victim /dev/shm/kern-$U $U 700 tmpfs ok" ]
	# /run not a tmpfs (ext4 here): root's state goes to /dev/shm too.
	RUN=host
	run in_private_ns "where root env -u XDG_RUNTIME_DIR"
	assert_status 0
	[ "${lines[0]}" = "root /dev/shm/kern-0 0 700 tmpfs ok" ]
	# A login session's /run/user/<uid> comes first, XDG_RUNTIME_DIR before it.
	RUN=tmpfs RUN_USER=$U
	run in_private_ns "where victim $v; where xdg $v XDG_RUNTIME_DIR=/dev/shm"
	assert_status 0
	[ "${lines[0]}" = "victim /run/user/$U/kern $U 700 tmpfs ok" ]
	[ "${lines[1]}" = "xdg /dev/shm/kern $U 700 tmpfs ok" ]
}

@test "OT-8: a /dev/shm/kern-<uid> pre-created by another user (directory or symlink) is passed over with one note; ps, exec and stop find the box" {
	victim_setup
	for squat in dir symlink; do
		rm -rf "/tmp/kern-$U" "/dev/shm/kern-$U"
		if [ $squat = dir ]; then install -d -o 65534 -m 777 "/dev/shm/kern-$U"; else ln -s "$d" "/dev/shm/kern-$U"; fi
		box sq1
		assert_status 0
		[ "$stderr" = "kern: note: /dev/shm/kern-$U is not kern's to use (a symlink, or another user's): using /tmp/kern-$U" ]
		[ "$(stat -c '%u %a' "/tmp/kern-$U")" = "$U 700" ]
		started+=(sq2)
		SLEEP=30 box sq2 -d
		assert_status 0
		[ "$output" = sq2 ]
		run "${victim[@]}" "$KERN" ps -q
		[ "$output" = sq2 ]
		run "${victim[@]}" "$KERN" exec sq2 -- echo inside
		[ "$output" = inside ]
		run "${victim[@]}" "$KERN" stop sq2
		assert_status 0
		run "${victim[@]}" "$KERN" ps -q
		[ -z "$output" ]
	done
	# Nothing was written through the squatter's symlink or into its directory.
	[ -z "$(ls -A "$d" | grep -v '^home$')" ]
}

@test "OT-8: with /dev/shm and /tmp both squatted, the state goes under the caller's home" {
	victim_setup
	install -d -o 65534 "/dev/shm/kern-$U"
	ln -s /tmp "/tmp/kern-$U"
	box sq3
	assert_status 0
	[ "$stderr" = "kern: note: /dev/shm/kern-$U is not kern's to use (a symlink, or another user's): using $d/home/.local/state/kern/run" ]
	[ "$(stat -c '%u %a' "$d/home/.local/state/kern/run")" = "$U 700" ]
	[ -d "$d/home/.local/state/kern/run/instances" ]
}

# legacy_box NAME: a box recorded under /tmp/kern-<uid>, as an older kern
# (which preferred /tmp) recorded it: the applet chain of `kern box
# --plan` with that runtime directory, in the background.
legacy_box() {
	local plan
	plan=$("$KERN" box "$1" --plan --allow-uncapped --image host -- sleep 60)
	# The new default is not /tmp, or this would prove nothing.
	! grep -q -- "--runtime $legacy " <<<"$plan" || { echo "kern box itself picks $legacy"; return 1; }
	plan=$(sed "s|--runtime [^ ]*|--runtime $legacy|" <<<"$plan")
	legacy_started+=("$1")
	sh -c "$plan" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 200); do
		[ "$(awk -F'\t' '$1 == "pid1" { print $2 }' "$legacy/instances/$1" 2>/dev/null)" -gt 0 ] 2>/dev/null && return 0
		sleep 0.05
	done
	echo "the chain never recorded box $1 under $legacy"
	return 1
}

@test "issue 16: ps, exec, stop and recover find boxes an older kern recorded under /tmp/kern-<uid>; their names stay claimed [rootless]" {
	unset XDG_RUNTIME_DIR
	export HOME=$BATS_TEST_TMPDIR/home
	mkdir -p "$HOME"
	legacy=/tmp/kern-$(id -u)
	[ -e "$legacy" ] || legacy_made=1
	n1=legacy1-$$ n2=legacy2-$$
	legacy_box "$n1"
	run "$KERN" ps -q
	assert_line_re "^$n1\$"
	run "$KERN" ps --json --filter "name=$n1"
	assert_line_re "\"name\": *\"$n1\""
	# The name is taken wherever the box is recorded.
	run --separate-stderr "$KERN" box "$n1" --allow-uncapped --image host -- true
	assert_status 1
	[ "${stderr%%$'\n'*}" = "error: box: a box named '$n1' is already running" ]
	run "$KERN" exec "$n1" -- echo inside
	assert_status 0
	[ "$output" = inside ]
	run "$KERN" stop "$n1"
	assert_status 0
	run "$KERN" ps -q
	refute_line_re "^$n1\$"
	[ ! -e "$legacy/instances/$n1" ] || { echo "record left"; false; }
	# A supervisor killed with SIGKILL: recover reclaims its record and
	# scratch under /tmp/kern-<uid>.
	legacy_box "$n2"
	sup=$(awk -F'\t' '$1 == "supervisor" { print $2 }' "$legacy/instances/$n2")
	ls -d "$legacy/scratch/$n2-$sup"
	kill -KILL "$sup"
	wait "$sup" 2>/dev/null || true
	[ -e "$legacy/instances/$n2" ]
	run --separate-stderr "$KERN" recover
	assert_status 0
	# Its scratch is there to reclaim, so recover reports what it removed.
	# The record usually counts too; but any kern of the same user that
	# walks the records (a box start, kern ps: other suites of make check
	# run beside this one) deletes a dead record it meets, and may have
	# been first. What is left under /tmp/kern-<uid> afterwards is the test.
	[[ "$stderr" =~ ^"kern: note: recover: removed "[0-9]+" dead record"s?", "[1-9][0-9]*" scratch director" ]]
	[ ! -e "$legacy/instances/$n2" ]
	[ ! -e "$legacy/scratch/$n2-$sup" ]
}

# Issue 16 made the runtime directory's checks cheaper (probed once per
# process, each child looked at with one lstat): they still run on every
# start, and still fail closed.
@test "issue 16: every start re-checks the runtime directory: loosened modes are tightened, a symlinked or foreign child is refused" {
	victim_setup
	rt=/dev/shm/kern-$U
	box first
	assert_status 0
	chmod 755 "$rt" "$rt/instances" "$rt/claims"
	box again
	assert_status 0
	[ "$(stat -c %a "$rt" "$rt/instances" "$rt/claims" | tr '\n' ' ')" = "700 700 700 " ]
	# claims/ a symlink to a directory the victim owns: never followed.
	install -d -o $U -g $U "$d/elsewhere"
	rm -rf "$rt/claims"
	ln -s "$d/elsewhere" "$rt/claims"
	box linked
	assert_status 125
	[[ "$stderr" == *"$rt/claims"*"ymbolic link"* ]] || { echo "$stderr"; false; }
	[ -z "$(ls -A "$d/elsewhere")" ]
	[ ! -e "$rt/instances/linked" ]
	# instances/ another user's directory: refused as well.
	rm -f "$rt/claims"
	rm -rf "$rt/instances"
	install -d -o 65534 -m 700 "$rt/instances"
	box foreign
	assert_status 125
	[[ "$stderr" == *"$rt/instances"*"not permitted"* ]] || { echo "$stderr"; false; }
	rm -rf "$rt/instances"
	box last
	assert_status 0
	# The whole directory removed after this start probed it (the bind
	# source's overlap check; paused right after the checks of the
	# arguments): made again, as private.
	err=$BATS_TEST_TMPDIR/err
	install -d -o $U -g $U "$d/src"
	"${victim[@]}" KERN_TEST_PAUSE=parse KERN_TEST_RESUME="$d/go" "$KERN_T" box gone \
		--allow-uncapped --image host -v "$d/src:/mnt" -- true 2>"$err" &
	kpid=$!
	wait_for "$err" "paused at parse" 10
	rm -rf "$rt"
	touch "$d/go"
	wait $kpid
	[ "$(stat -c '%u %a' "$rt" "$rt/instances" | tr '\n' ' ')" = "$U 700 $U 700 " ]
}
