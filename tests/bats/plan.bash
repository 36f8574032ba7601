# compare_plan: run `kern box ARGS -- sh -c PROBE` directly and as the
# chain `--plan` prints; the two must agree on the mount table, the
# environment, the user and groups, hostname, working directory, the size
# of /, the capability sets, the TCP listeners (the egress proxy's) and the
# exit status.
# Shared by plan.bats and image-box.bats.

# Mount point, type and options of every mount, as the box sees them.
# Overlay options name the lower, upper and work directories by descriptor
# number, which differs between the two runs: compare without the numbers.
# Sorted: the kernel lists a namespace's mounts in the order they were
# made, and the trees a root-run box's supervisor makes ahead (idmount.h)
# are made while PID 1 mounts its own, in no fixed order.
# The size of / is the writable layer's (--disk), which /proc/self/mounts
# does not show for an overlay root.
probe='awk "{print \$2, \$3, \$4}" /proc/self/mounts | sed "s|/proc/self/fd/[0-9]*|fd|g" | sort; echo ---; env | sort; echo ---; id -u; id -G; hostname; pwd; stat -f -c "%b %S" /; grep ^Cap /proc/self/status; awk "NR > 1 {print \$2, \$4}" /proc/net/tcp; exit 7'

compare_plan() {
	run "$KERN" box "$@" -- sh -c "$probe"
	assert_status 7
	direct=$output
	plan=$("$KERN" box "$@" --plan -- sh -c "$probe")
	[[ $plan == *kern-cg*kern-ns*kern-wait*kern-fs*kern-seccomp* ]]
	run sh -c "$plan"
	assert_status 7
	[ "$output" = "$direct" ] || { diff <(echo "$direct") <(echo "$output"); return 1; }
}

# The chain execs kern from a descriptor after pivot_root; a dynamic kern
# would need its ELF loader inside the box root, so chains inside a foreign
# root run the static release binary, through applet links on PATH.
use_static_chain() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	for a in kern kern-cg kern-ns kern-wait kern-fs kern-seccomp; do
		ln -sf "$TREE/build/kern-static" "$BATS_TEST_TMPDIR/bin/$a"
	done
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
	KERN=$BATS_TEST_TMPDIR/bin/kern
}
