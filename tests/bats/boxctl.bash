# Shared by the box-management suites (boxctl*.bats): a busybox rootfs,
# detached boxes, outcome-byte and alive-pipe capture, and the end-of-test
# check that no box, record or scratch directory is left.

# The busybox rootfs of helper.bash (mkrootfs), plus a marker file the
# host does not have and the applets these tests use beyond mkrootfs's.
make_rootfs() {
	local r a
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		skip "needs a static /bin/busybox (apt-get install busybox-static)"
	r=$(mkrootfs "$1") || return 1
	mkdir -p "$r/srv" "$r/home/app" "$r/proc" "$r/dev"
	for a in awk pwd chown; do ln -sf busybox "$r/bin/$a"; done
	echo "box-rootfs" >"$r/srv/marker"
}

ROOTFS() { echo "$BATS_FILE_TMPDIR/rootfs"; }

# kern_d NAME [box flags] -- CMD: a detached box; fails the test if it
# does not start.
kern_d() {
	local name=$1 out
	shift
	out=$("$KERN" box "$name" -d "$@") || { echo "kern box $name -d failed: $out"; return 1; }
	[ "$out" = "$name" ] || { echo "kern box -d printed '$out', not '$name'"; return 1; }
}

# A field of a box's registry record, straight from the file (fast enough
# to poll): rec_field NAME KEY
rec_field() {
	awk -F'\t' -v k="$2" '$1 == k { print $2 }' "$(runtime_dir)/instances/$1" 2>/dev/null || true
}

# wait_pid1 NAME: until the box's PID 1 is recorded (at most 10 s).
wait_pid1() {
	local p
	for _ in $(seq 200); do
		p=$(rec_field "$1" pid1)
		[ -n "$p" ] && [ "$p" != 0 ] && return 0
		sleep 0.05
	done
	echo "box $1 never recorded its PID 1"
	return 1
}

# Field of a box's JSON row from kern ps: box_field NAME KEY
box_field() {
	"$KERN" ps --json --filter "name=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0][sys.argv[1]] if r else "")' "$2"
}

# Milliseconds since the epoch.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# with_fds [-N] CMD...: run CMD with KERN_STARTED_FD=5 (into $STARTED) and
# KERN_ALIVE_FD=6 (into $ALIVE); sets status and output like `run` (and
# -N expects status N, as `run -N` does).
with_fds() {
	local expect=()
	[[ $1 == -[0-9]* ]] && { expect=("$1"); shift; }
	STARTED=$BATS_TEST_TMPDIR/started.$RANDOM ALIVE=$BATS_TEST_TMPDIR/alive.$RANDOM
	: >"$STARTED"
	: >"$ALIVE"
	run "${expect[@]}" env KERN_STARTED_FD=5 KERN_ALIVE_FD=6 "$@" 5>"$STARTED" 6>"$ALIVE"
}
started_bytes() { outcome "$STARTED"; }
alive_bytes() { cat "$ALIVE"; }

# Stop whatever a test left running, reclaim, and check nothing remains.
boxes_cleanup() {
	local n
	for n in $("$KERN" ps -q 2>/dev/null); do
		"$KERN" stop -t 0 "$n" >/dev/null 2>&1 || true
	done
	"$KERN" recover >/dev/null 2>&1 || true
}
assert_no_leftovers() {
	local rt left
	rt=$(runtime_dir)
	[ -d "$rt" ] || return 0
	left=$(ls -A "$rt/instances" "$rt/scratch" 2>/dev/null | grep -v '^/' | grep -v '^$' || true)
	[ -z "$left" ] || { echo "left in $rt: $left"; ls -la "$rt/instances" "$rt/scratch"; return 1; }
}

# pid_alive PID: the process exists and is not a zombie.
pid_alive() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null | head -1) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_gone PID MS: wait up to MS milliseconds for PID to end.
wait_gone() {
	local end=$(($(now_ms) + $2))
	while pid_alive "$1"; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.02
	done
}

# The lockdown of main is a placeholder until lib/lockdown/lockdown.c lands: the
# tests that check capabilities, users and seccomp modes through kern
# exec say so instead of passing or failing on a stand-in.
require_lockdown() {
	local eff
	eff=$("$KERN" box lockprobe-$$ --image host --cap-drop ALL -- awk '/^CapEff:/ {print $2}' /proc/self/status 2>/dev/null)
	[ "$eff" = 0000000000000000 ] || skip "this build's lockdown is the placeholder (a --cap-drop ALL box has CapEff $eff)"
}
