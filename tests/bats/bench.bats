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

# bench/box-roles's parsers (bench/perfroles.py) on a fixed recording: a
# driver (python3 100) starts kern (101), whose PID 1 (102) spawns the
# workload (103); 200 is no part of it, 7 is a kernel thread, 0 idle;
# the driver's own sample counts for no role.
ROLES_FIXTURE='python3   100 [000]   1.000000: PERF_RECORD_COMM exec: python3:100/100
python3   100 [000]   1.000100: PERF_RECORD_FORK(101:101):(100:100)
kern   101 [000]   1.000200: PERF_RECORD_FORK(102:102):(101:101)
kern   102 [001]   1.000300: PERF_RECORD_FORK(103:103):(102:102)

kern   101 [000]   1.000400:      50000 cpu-clock:ppp: 
	ffffffff816ef05e path_openat+0x54e ([kernel.kallsyms])
	ffffffff816d29cd __x64_sys_openat+0x5d ([kernel.kallsyms])
	ffffffff8225aa01 do_syscall_64+0x71 ([kernel.kallsyms])
	           db419 [unknown] (/x/kern)

kern   101 [000]   1.000450:      50000 cpu-clock:ppp: 
	           db419 [unknown] (/x/kern)

kern   102 [001]   1.000500:      50000 cpu-clock:ppp: 
	ffffffff81001111 handle_mm_fault+0x1 ([kernel.kallsyms])
	ffffffff81001112 asm_exc_page_fault+0x2 ([kernel.kallsyms])
	           db419 [unknown] (/x/kern)

true   103 [001]   1.000600:      50000 cpu-clock:ppp: 
	ffffffff81002222 do_group_exit+0x1 ([kernel.kallsyms])
	ffffffff81002223 __x64_sys_exit_group+0x2 ([kernel.kallsyms])
	ffffffff81002224 x64_sys_call+0x3 ([kernel.kallsyms])
	ffffffff8225aa01 do_syscall_64+0x71 ([kernel.kallsyms])

python3   100 [000]   1.000650:      50000 cpu-clock:ppp: 
	           22222 [unknown] (/usr/bin/python3.11)

other   200 [000]   1.000700:      50000 cpu-clock:ppp: 
	           11111 [unknown] (/x/other)

kworker/0:1-eve     7 [000]   1.000800:      50000 cpu-clock:ppp: 
	ffffffff81003333 cleanup_net+0x1 ([kernel.kallsyms])
	ffffffff81003334 ret_from_fork_asm+0x1 ([kernel.kallsyms])

swapper     0 [000]   1.000900:      50000 cpu-clock:ppp: 
	ffffffff81004444 default_idle+0x1 ([kernel.kallsyms])
'

@test "box-roles: each sample goes to the start's process that ran it, idle and strangers to none [rootless]" {
	ROLES_FIXTURE=$ROLES_FIXTURE run /usr/bin/python3 -c '
import os, sys
sys.path.insert(0, sys.argv[1])
from perfroles import driver_of, roles
text = os.environ["ROLES_FIXTURE"]
assert driver_of(text) == 100, driver_of(text)
for role, cats in sorted(roles(text, 100, 1, sample_us=1000).items()):
    for cat, ms in sorted(cats.items()):
        print(f"{role} | {cat} | {ms:.1f}")
' "$TREE/bench"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 command (kern's supervisor, the floor's main) | sys __x64_sys_openat | 1.0"* ]]
	[[ "$output" == *"1 command (kern's supervisor, the floor's main) | user | 1.0"* ]]
	[[ "$output" == *"2 PID 1 | page fault | 1.0"* ]]
	[[ "$output" == *"3 workload | sys __x64_sys_exit_group | 1.0"* ]]
	[[ "$output" == *"kernel threads | kernel ret_from_fork_asm | 1.0"* ]]
	# Those five and nothing for the driver, the stranger or the idle task.
	[ "$(grep -c ' | ' <<<"$output")" -eq 5 ]
}

@test "box-roles: a start's phases come from its exec, forks and exits [rootless]" {
	run /usr/bin/python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from perfroles import phases
text = """\
    kern  101 10.000: sched:sched_process_exec: filename=/x/kern pid=101 old_pid=101
    kern  101 10.001: sched:sched_process_fork: comm=kern pid=101 child_comm=kern child_pid=102
    kern  102 10.003: sched:sched_process_fork: comm=kern pid=102 child_comm=kern child_pid=103
    true  103 10.004: sched:sched_process_exit: comm=true pid=103 prio=120 group_dead=true
    kern  102 10.0045: sched:sched_process_exit: comm=kern pid=102 prio=120 group_dead=true
    kern  101 10.0065: sched:sched_process_exit: comm=kern pid=101 prio=120 group_dead=true
    other 200 10.007: sched:sched_process_exec: filename=/x/other pid=200 old_pid=200
"""
for phase, spans in phases(text, "/x/kern").items():
    print(f"{phase} | {len(spans)} | {spans[0] * 1000:.1f}")
' "$TREE/bench"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"exec to PID 1's clone | 1 | 1.0"* ]]
	[[ "$output" == *"PID 1's setup, to the workload's spawn | 1 | 2.0"* ]]
	[[ "$output" == *"the workload | 1 | 1.0"* ]]
	[[ "$output" == *"PID 1's exit | 1 | 0.5"* ]]
	[[ "$output" == *"after PID 1, to the command's end | 1 | 2.0"* ]]
	[[ "$output" == *"total | 1 | 6.5"* ]]
}
