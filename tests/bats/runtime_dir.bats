#!/usr/bin/env bats
# Where kern keeps its runtime state without XDG_RUNTIME_DIR, and what it
# does when another user holds a name it would use (security-tests.md
# OT-8). As root: the squatter is root or nobody, the victim an
# unprivileged uid with no other state on this host (setpriv), so real
# users' /tmp/kern-<uid> are never touched.
load helper

U=4243

setup() {
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
	for n in "${started[@]}"; do "${victim[@]}" "$KERN" stop "$n" >/dev/null 2>&1 || true; done
	rm -rf "/tmp/kern-$U" "/dev/shm/kern-$U" "${d:-/nonexistent}"
}
started=()

# box NAME [-d]: a host-image box of the victim's; stderr in $stderr.
box() {
	run --separate-stderr "${victim[@]}" "$KERN" box "$1" "${@:2}" --allow-uncapped --image host -- sleep "${SLEEP:-0}"
}

@test "OT-8: without XDG_RUNTIME_DIR an unprivileged caller's state is /tmp/kern-<uid>, with no note" {
	box plain
	assert_status 0
	[ -z "$stderr" ]
	[ "$(stat -c '%u %a' "/tmp/kern-$U")" = "$U 700" ]
	[ ! -e "/dev/shm/kern-$U" ]
}

@test "OT-8: a /tmp/kern-<uid> pre-created by another user (directory or symlink) is passed over with one note; ps, exec and stop find the box" {
	for squat in dir symlink; do
		rm -rf "/tmp/kern-$U" "/dev/shm/kern-$U"
		if [ $squat = dir ]; then install -d -o 65534 -m 777 "/tmp/kern-$U"; else ln -s "$d" "/tmp/kern-$U"; fi
		box sq1
		assert_status 0
		[ "$stderr" = "kern: note: /tmp/kern-$U is not kern's to use (a symlink, or another user's): using /dev/shm/kern-$U" ]
		[ "$(stat -c '%u %a' "/dev/shm/kern-$U")" = "$U 700" ]
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

@test "OT-8: with /tmp and /dev/shm both squatted, the state goes under the caller's home" {
	install -d -o 65534 "/tmp/kern-$U"
	ln -s /tmp "/dev/shm/kern-$U"
	box sq3
	assert_status 0
	[ "$stderr" = "kern: note: /tmp/kern-$U is not kern's to use (a symlink, or another user's): using $d/home/.local/state/kern/run" ]
	[ "$(stat -c '%u %a' "$d/home/.local/state/kern/run")" = "$U 700" ]
	[ -d "$d/home/.local/state/kern/run/instances" ]
}
