#!/usr/bin/env bats
# CONC-3 (security-tests.md §7, concurrency): a storm of start, stop, ps and
# exec on 50 names. ps never lists a box after its stop returned; stop never
# hits another box; every exec lands in the box it named.
load helper
load boxctl

setup() { kern_private_dirs; }

teardown() { boxes_cleanup; }

# Root only: the registry, stop and exec take the same paths rootless (the
# [rootless] tests of boxctl.bats cover those), and the storm is the
# slowest test here.
@test "CONC-3: start, stop, ps and exec storm on 50 names" {
	m=$BATS_TEST_TMPDIR/m
	log=$BATS_TEST_TMPDIR/log
	mkdir -p "$m"
	# 50 resident boxes; each writes its own name when SIGTERM reaches it.
	for i in $(seq 0 49); do
		"$KERN" box "st$i" -d --image host -v "$m:/m" -- \
			sh -c "trap 'echo st$i >> /m/term; exit 0' TERM; while :; do sleep 0.2; done" >/dev/null &
		if [ $((i % 8)) -eq 7 ]; then wait; fi
	done
	wait
	run "$KERN" ps -q
	[ "${#lines[@]}" -eq 50 ]

	# The storm: stop the even ones, exec into the odd ones, list all the
	# time, and let short-lived boxes of other names come and go.
	for i in $(seq 0 2 48); do
		("$KERN" stop -t 5 "st$i" && echo "st$i $(now_ms)" >>"$log.stop") &
	done
	(for _ in $(seq 40); do t=$(now_ms); echo "$t $("$KERN" ps -q | tr '\n' ' ')" >>"$log.ps"; done) &
	for i in $(seq 1 2 49); do
		(echo "st$i $("$KERN" exec "st$i" -- hostname)" >>"$log.exec") &
	done
	for j in $(seq 0 9); do "$KERN" box "tmp$j" --image host -- true & done
	wait

	# Each even box got its own SIGTERM, once; no odd box got one.
	[ "$(LC_ALL=C sort "$m/term")" = "$(seq 0 2 48 | sed 's/^/st/' | LC_ALL=C sort)" ]
	[ "$(wc -l <"$log.stop")" -eq 25 ]
	# Each exec ran in the box it named.
	[ "$(wc -l <"$log.exec")" -eq 25 ]
	while read -r n h; do [ "$n" = "$h" ] || { echo "exec into $n ran in '$h'"; return 1; }; done <"$log.exec"
	# No listing taken after a stop returned names that box.
	while read -r n t; do
		awk -v n="$n" -v t="$t" '$1 > t { for (i = 2; i <= NF; i++) if ($i == n) { print "ps at " $1 " lists " n " stopped at " t; exit 1 } }' "$log.ps"
	done <"$log.stop"
	# Every listing names only boxes of this test.
	awk '{ for (i = 2; i <= NF; i++) if ($i !~ /^(st[0-9]+|tmp[0-9])$/) { print "listed: " $i; bad = 1 } } END { exit bad }' "$log.ps"
	run "$KERN" ps -q
	[ "$output" = "$(seq 1 2 49 | sed 's/^/st/' | LC_ALL=C sort)" ]
	for i in $(seq 1 2 49); do "$KERN" stop -t 0 "st$i" & done
	wait
	run "$KERN" ps -q
	[ -z "$output" ]
	assert_no_leftovers
}
