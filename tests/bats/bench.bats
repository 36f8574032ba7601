#!/usr/bin/env bats
# bench/startup.py, which every start-up figure in README.md's Measured
# comes from: its CPU column counts what the command and everything it
# reaped spent (a box's supervisor, PID 1 and workload), not the wall
# time, and --settle's machine column counts the whole machine's.
load helper

STARTUP=$TREE/bench/startup.py
# A process that burns 60 ms of CPU, then exits (Debian's python3: no
# version manager's shims around it).
SPIN="/usr/bin/python3 -c 'import time
t = time.process_time() + 0.06
while time.process_time() < t: pass'"

setup() {
	[ -f "$STARTUP" ] || { echo "$STARTUP is missing"; return 1; }
}

# The cpu ms of row NAME in startup.py's table (5th column).
cpu_of() { awk -v n="$1" '$1 == n { print $5 }' <<<"$output"; }
machine_of() { awk -v n="$1" '$1 == n { print $6 }' <<<"$output"; }
at_least() { awk -v v="$1" -v m="$2" 'BEGIN { exit !(v + 0 >= m) }'; }
at_most() { awk -v v="$1" -v m="$2" 'BEGIN { exit !(v + 0 <= m) }'; }

@test "startup.py: a command's CPU counts its grandchildren, and sleeping is not CPU [rootless]" {
	run python3 "$STARTUP" 2 "spin=sh -c \"$SPIN\"" "idle=sleep 0.06" --ratio spin/idle
	[ "$status" -eq 0 ]
	echo "$output"
	# The spinner is sh's child: wait4's rusage reaches it through sh.
	at_least "$(cpu_of spin)" 50
	at_most "$(cpu_of idle)" 20
	# Each ratio line carries the CPU ratio as well.
	[[ "$output" == *"ratio spin/idle = "*"(cpu "* ]]
}

@test "startup.py --burst: CPU is the burst's total over its copies [rootless]" {
	run python3 "$STARTUP" 1 --burst 4 "spin=sh -c \"$SPIN\""
	[ "$status" -eq 0 ]
	echo "$output"
	# Each copy spins 60 ms (and starts Python): per copy, not all four's.
	at_least "$(cpu_of spin)" 50
	at_most "$(cpu_of spin)" 200
}

@test "startup.py --settle: the machine column counts the whole machine's busy time [rootless]" {
	# Beside the other suites the machine is never quiet: wait 0.3 s at most.
	STARTUP_SETTLE_MAX=0.3 run python3 "$STARTUP" 1 --settle "spin=sh -c \"$SPIN\"" "idle=sleep 0.06" --ratio spin/idle
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"machine ms"* ]]
	# /proc/stat counts in ticks (10 ms): 60 ms of spinning reads 40 or more.
	at_least "$(machine_of spin)" 40
	[[ "$output" == *", machine "* ]]
}

@test "startup.py: a command that fails stops the run with its status" {
	run python3 "$STARTUP" 1 "bad=sh -c 'exit 3'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad failed"* ]]
}
