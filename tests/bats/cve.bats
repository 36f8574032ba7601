#!/usr/bin/env bats
# Regression tests from real breaks (issue 15): each test replays, on real
# boxes, a published break of a comparable sandbox or a kernel bug
# reachable from a user namespace, and would fail had kern the same flaw.
# Test names carry the CVE id. Bullets an existing suite already covers
# are mapped here instead of tested twice:
#
#   CVE-2024-21626 (runc, leaked fds): the fd half is FD-1/FD-2
#     (box_life.bats "FD-1/FD-2: the box sees only 0 1 2 ...", boxctl.bats
#     "FD-1 via exec ...", egress.bats "FD-1: the egress box ..."); the
#     cwd half (--workdir, kern exec -w) is tested below.
#   CVE-2017-5226 (bubblewrap, TIOCSTI): OT-1 (terminal.bats, C1's) pushes
#     a character into a pty and checks nothing arrives.
#   CVE-2021-30465 (runc, bind target through a swapped symlink): MNT-7,
#     MNT-8 (box_fs.bats) and OT-9 (box_mounts.bats) for -v sources and
#     targets; the rest of setup (/dev, /proc, tmpfs, workdir) is below.
#   GKE gVisor metadata finding: EG-7 (egress.bats, names resolving to
#     private, metadata, mapped addresses) and EG-3 (IP literals in every
#     spelling); what those leave out is below.
#   crun CVE-2026-88264/88265 (stdio through a symlink): a detached box's
#     log is tested below; the -t pty (issue 17, C1's lib/box/pty.c) is opened
#     from a devpts proved by its filesystem type, its peer by TIOCGPTPEER,
#     never by a path in the box (terminal.bats).
load helper

setup() { kern_private_dirs; }

# A host directory holding a canary name the box must never list.
host_canary() {
	canary=$BATS_TEST_TMPDIR/host-dir
	mkdir -p "$canary"
	touch "$canary/h1-canary-host-file"
}

# ---- CVE-2024-21626: a working directory outside the root ----

@test "CVE-2024-21626: kern exec -w /proc/self/fd/N (a host directory kern exec inherited) is refused [rootless]" {
	host_canary
	name=cve21626x-$$
	"$KERN" box "$name" -d --image host -q -- sleep 30
	# fd 7 is a host directory the caller passed down; /proc/self/fd/7 in
	# the command's process would be that directory, outside the box.
	run -127 --separate-stderr "$KERN" exec -w /proc/self/fd/7 "$name" -- sh -c 'pwd; ls' 7<"$canary"
	out1=$output err1=$stderr st1=$status
	# the same through a symlink the box planted in its own /tmp
	"$KERN" exec "$name" -- ln -s /proc/self/fd/7 /tmp/wd
	run -127 --separate-stderr "$KERN" exec -w /tmp/wd "$name" -- sh -c 'pwd; ls' 7<"$canary"
	# a plain symlink inside the box still works as a workdir
	"$KERN" exec "$name" -- sh -c 'mkdir -p /tmp/real && ln -s /tmp/real /tmp/ok'
	run2=$("$KERN" exec -w /tmp/ok "$name" -- pwd)
	"$KERN" stop "$name" >/dev/null 2>&1 || true
	for o in "$out1" "$output"; do
		[[ $o != *h1-canary-host-file* ]] || { echo "the command listed the host directory: $o"; return 1; }
	done
	[ "$st1" = 127 ] && [ "$status" = 127 ] || { echo "status $st1 / $status: $err1 / $stderr"; return 1; }
	[[ $err1 == "kern: cannot start 'sh' in box: "* ]]
	[[ $stderr == "kern: cannot start 'sh' in box: "* ]]
	[ "$run2" = /tmp/real ]
}

@test "CVE-2024-21626: --workdir through /proc/self/fd/N or a rootfs symlink to the host is refused with 125 [rootless]" {
	host_canary
	run --separate-stderr "$KERN" box cve21626w --image host --workdir /proc/self/fd/7 -- sh -c 'pwd; ls' 7<"$canary"
	assert_status 125
	[[ $output != *h1-canary-host-file* ]]
	[[ $stderr == "kern: sandbox setup failed: workdir /proc/self/fd/7: "* ]]
	r=$(mkrootfs)
	ln -sfn "$canary" "$r/wd"
	ln -sfn /proc/self/fd/7 "$r/wd2"
	for w in /wd /wd2 /wd/x; do
		run --separate-stderr "$KERN" box cve21626r --rootfs "$r" --workdir "$w" -- sh -c 'pwd; ls' 7<"$canary"
		assert_status 125
		[[ $output != *h1-canary-host-file* ]]
		[[ $stderr == "kern: sandbox setup failed: workdir $w: "* ]]
	done
	# nothing was created through the symlink
	[ "$(ls -A "$canary")" = h1-canary-host-file ]
}

# ---- the GKE gVisor cloud metadata finding ----
# The release build with real DNS: tests/helpers/egress-ns makes "the host"
# a network namespace with only lo (169.254.169.254, 10.0.0.1, ... added
# there, each with a canary on ports 80 and 443) and, with
# EGRESS_NS_PUBLIC=1, a second namespace holding 1.1.1.1 ("the internet",
# dns-public.test.example). Nothing leaves the namespaces the test makes.

egress_fixture() {
	command -v unshare >/dev/null && unshare -rn true 2>/dev/null ||
		skip "unprivileged user and network namespaces are not available"
	EG=$BATS_TEST_TMPDIR/eg
	mkdir -p "$EG"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$EG/key.pem" -out "$EG/cert.pem" -days 2 \
		-subj /CN=test.example >/dev/null 2>&1 || skip "openssl could not make the throwaway certificate"
	PY=/usr/bin/python3
	[ -x "$PY" ] || PY=python3
	export EGRESS_NS_PUBLIC=1
}

# meta_box SCRIPT: SCRIPT runs in a release-build box allowed test.example.
meta_box() {
	"$TREE/tests/helpers/egress-ns" "$EG" "$KERN" box "cvemeta$BATS_TEST_NUMBER" --image host -q \
		-v "$TREE:$TREE:ro" --egress-allow test.example -- sh -c "$1"
}

no_canary() {
	! grep -q '^canary' "$EG/conn.log" || { echo "a refused address was reached:"; cat "$EG/conn.log"; return 1; }
}

@test "CVE gVisor-GKE metadata: a listed name whose DNS answer is metadata, link-local, private or loopback, in any form, gets 502 [rootless]" {
	egress_fixture
	names="meta4 linklocal loop private meta-nat64 meta-6to4 meta-compat ll6 loop6 meta-both dns-meta"
	run meta_box "
		for n in $names; do
			curl -sS -o /dev/null -w \"\$n %{http_code}\n\" http://\$n.test.example/latest/meta-data/
			$PY $TREE/tests/helpers/egress-client.py raw \"CONNECT \$n.test.example:443 HTTP/1.1\r\n\r\n\"
		done
		curl -sS -o /dev/null -w 'control %{http_code}\n' http://dns-public.test.example/"
	printf '%s\n' "$output"
	assert_status 0
	for n in $names; do
		assert_line_re "^$n 502\$"
	done
	[ "$(grep -cx 'HTTP/1.1 502 Bad Gateway' <<<"$output")" -eq 11 ]
	# positive control: a public answer is served
	assert_line_re '^control 200$'
	no_canary
	# every name was asked (the proxy resolved it, then refused it)
	for n in $names; do grep -q "^$n.test.example A$" "$EG/dns.log"; done
}

@test "CVE gVisor-GKE metadata: a redirect from a listed site to metadata, in every address spelling, is never followed to it [rootless]" {
	egress_fixture
	urls=(http://169.254.169.254/latest/meta-data/ http://2852039166/ http://0251.0376.0251.0376/
	      http://0xa9.0xfe.0xa9.0xfe/ http://0xa9fea9fe/ http://169.254.43518/ 'http://[::ffff:169.254.169.254]/'
	      'http://[::ffff:a9fe:a9fe]/' 'http://[64:ff9b::a9fe:a9fe]/' http://127.1/ 'http://[::1]/'
	      http://localhost/ http://meta4.test.example/ http://10.0.0.1/)
	urls=${urls[*]}
	run meta_box "
		for u in $urls; do
			curl -g -sS -L -o /dev/null -w \"%{http_code} %{num_redirects} \$u\n\" \"http://dns-public.test.example/302/\$u\" 2>/dev/null ||
				echo \"curl-failed \$u\"
		done"
	printf '%s\n' "$output"
	assert_status 0
	[ "${#lines[@]}" -eq 14 ]
	# The first hop reached the public site each time and curl followed
	# the redirect through the proxy, which refused it.
	[ "$(grep -c '^public ' "$EG/conn.log")" -eq 14 ]
	[ "$(grep -Ec '^(403|502) 1 ' <<<"$output")" -eq 14 ]
	no_canary
}

@test "CVE gVisor-GKE metadata: request heads naming metadata in decimal, octal, hex, short and IPv6 spellings get 403 [rootless]" {
	egress_fixture
	heads=
	for h in 169.254.169.254 169.254.169.254. 2852039166 0251.0376.0251.0376 0xa9.0xfe.0xa9.0xfe \
		0xa9fea9fe 169.254.43518 0251.254.169.254 '[::ffff:169.254.169.254]' '[::ffff:a9fe:a9fe]' \
		'[64:ff9b::a9fe:a9fe]' '[fe80::1]' '[::1]' 127.1 0; do
		heads="$heads 'CONNECT $h:443 HTTP/1.1\r\n\r\n' 'GET http://$h/ HTTP/1.1\r\n\r\n' 'GET / HTTP/1.1\r\nHost: $h\r\n\r\n'"
	done
	run meta_box "$PY $TREE/tests/helpers/egress-client.py raw $heads"
	printf '%s\n' "$output"
	assert_status 0
	[ "${#lines[@]}" -eq 45 ]
	[ "$(grep -cx 'HTTP/1.1 403 Forbidden' <<<"$output")" -eq 45 ]
	no_canary
}

# ---- firejail CVE-2019-12589: the filter rewritten from inside, then joined ----

@test "CVE-2019-12589: a box that writes every file it can reach does not change the filter, caps or limits kern exec applies [rootless]" {
	name=cve12589-$$
	"$KERN" box "$name" -d --image host -q --cap-drop ALL --ulimit nofile=123:123 -- sleep 60
	# The workload, as box root with every capability it was given, writes
	# to every file it can reach and plants kern-looking state everywhere
	# it can create files.
	"$KERN" exec "$name" -- sh -c '
		find / -xdev \( -path /proc -o -path /sys \) -prune -o -type f -writable -print 2>/dev/null |
			while read -r f; do printf "allowlist=none\ncaps=all\n" >"$f" 2>/dev/null; done
		find / -xdev \( -path /proc -o -path /sys \) -prune -o -type d -writable -print 2>/dev/null |
			while read -r d; do for n in .kern kern.toml seccomp record caps limits; do
				printf "seccomp=none\ncaps=all\n" >"$d/$n" 2>/dev/null; done; done
		for f in /proc/1/attr/current /proc/self/attr/exec /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max \
			/proc/sys/kernel/seccomp/actions_logged; do { echo x >"$f"; } 2>/dev/null; done
		true'
	run "$KERN" exec "$name" -- sh -c 'grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status; ulimit -n; ls /tmp/.kern'
	run2=$("$KERN" exec "$name" -- mount -t tmpfs x /mnt 2>&1; echo "rc=$?")
	"$KERN" stop "$name" >/dev/null 2>&1 || true
	printf '%s\n' "$output"
	assert_status 0
	assert_line_re '^CapEff:[[:space:]]+0000000000000000$'
	assert_line_re '^CapPrm:[[:space:]]+0000000000000000$'
	assert_line_re '^CapBnd:[[:space:]]+0000000000000000$'
	assert_line_re '^NoNewPrivs:[[:space:]]+1$'
	assert_line_re '^Seccomp:[[:space:]]+2$'
	assert_line_re '^123$'
	# control: the box's writes did land where it could write
	assert_line_re '^/tmp/.kern$'
	# mount is in the kill set: the exec'd command dies with SIGSYS
	[[ $run2 == *"rc=159" ]] || { echo "$run2"; return 1; }
}

# ---- runc CVE-2025-31133/-52565/-52881 (masks redirected) and bubblewrap
# CVE-2026-87766 / runc CVE-2021-30465 (setup through a symlinked parent) ----
# A --bind-rootfs DIR is the box's root as it is on the host, so another
# process (a racing box with DIR bound read-write) can rename and replace
# its directories while kern builds the box. The test build stops at a
# named phase (KERN_TEST_PAUSE) until the test has made its swap and
# touched the resume file (KERN_TEST_RESUME): the race, made certain.

# race_box PHASE RESUME SWAP CMD: start the test build on $r, swap at PHASE
# (SWAP is shell run on the host), resume; sets status and output. RESUME
# is the path kern polls: /go once pivot_root is done (in the box: $r/go
# on the host), or "host" before it: PID 1 polls then as box root, which in
# a root-run box is a subordinate id (box_rootmap.bats) that cannot pass
# the 0700 bats directories, so the file is made in a directory of /tmp
# anyone may pass.
race_box() {
	local phase=$1 resume=$2 swap=$3
	shift 3
	local err=$BATS_TEST_TMPDIR/race.err out=$BATS_TEST_TMPDIR/race.out go godir=
	if [ "$resume" = /go ]; then
		go=$r/go
	else
		godir=$(mktemp -d /tmp/kern-race.XXXXXX)
		chmod 711 "$godir"
		resume=$godir/go go=$godir/go
	fi
	rm -f "$go"
	KERN_TEST_PAUSE=$phase KERN_TEST_RESUME=$resume timeout 60 "$KERN_T" box "race$BATS_TEST_NUMBER" -q \
		--rootfs "$r" --bind-rootfs -- "$@" >"$out" 2>"$err" &
	local pid=$!
	wait_for "$err" "paused at $phase" 20 || { kill "$pid"; rm -rf "$godir"; return 1; }
	sh -c "$swap"
	touch "$go"
	status=0
	wait "$pid" || status=$?
	[ -z "$godir" ] || rm -rf "$godir"
	output=$(cat "$out" "$err")
	# the test build's own pause line is not part of the box's output
	output=$(grep -v '^kern-test: paused at' <<<"$output" || true)
}

# host_side DIR...: host directories the hostile links point to, made
# where box root could write if kern followed a link: in a root-run box box
# root is a subordinate id (box_rootmap.bats), which could not even pass
# the 0700 bats directories, and would prove nothing; so they live under
# /tmp and belong to box root, as they belong to the caller in a user's box.
host_side() {
	if [ -z "${hostdir:-}" ]; then
		hostdir=$(mktemp -d /tmp/kern-cve-host.XXXXXX)
		chmod 711 "$hostdir"
	fi
	local d
	for d in "$@"; do
		mkdir -p "$d"
		is_root && chown "$(box_root_uid):$(box_root_gid)" "$d"
	done
	return 0
}
teardown() { [ -z "${hostdir:-}" ] || rm -rf "$hostdir"; }

hostile_rootfs() {
	[ -x "$KERN_T" ] || { echo "no test build at $KERN_T"; return 1; }
	r=$(mkrootfs "$BATS_TEST_TMPDIR/rootfs")
	mkdir -p "$r/dev" "$r/proc"
	host_side
	host=$hostdir/host-side
	host_side "$host"
}

@test "CVE-2026-87766: /dev swapped for a symlink to a host directory after kern mounted its /dev: nothing is created on the host, the box fails closed [rootless]" {
	hostile_rootfs
	race_box pid1-dev host "mv '$r/dev' '$r/dev.moved' && ln -s '$host' '$r/dev'" \
		sh -c 'echo ran; ls -l /dev'
	printf '%s\n' "$output"
	[ -z "$(ls -A "$host")" ] || { echo "created on the host:"; ls -la "$host"; return 1; }
	[ "$status" = 125 ]
	assert_line_re '^kern: sandbox setup failed: '
	refute_line_re '^ran$'
}

@test "CVE-2025-52881: /proc swapped for a symlink to a fake directory before pivot_root: the box fails closed, never runs on a fake /proc [rootless]" {
	hostile_rootfs
	mkdir -p "$r/fakeproc/sys" "$r/fakeproc/self/attr"
	race_box pid1-before-pivot host "mv '$r/proc' '$r/proc.moved' && ln -s /fakeproc '$r/proc'" \
		sh -c 'echo ran; stat -f -c %T /proc/'
	printf '%s\n' "$output"
	[ "$status" = 125 ]
	assert_line_re '^kern: sandbox setup failed: .*/proc'
	refute_line_re '^ran$'
}

@test "CVE-2025-31133: /dev/null swapped (symlink, another device, gone) before the /proc masks: masks come from a verified /dev/null or the box fails closed [rootless]" {
	hostile_rootfs
	# Box-side swaps happen after pivot_root: the resume file is in DIR,
	# which is the box's / by then.
	for swap in "mv '$r/dev' '$r/dev.moved' && mkdir '$r/dev' && ln -s /proc/sys/kernel/core_pattern '$r/dev/null'" \
		"mv '$r/dev' '$r/dev.moved' && mkdir '$r/dev'" \
		"mv '$r/dev' '$r/dev.moved' && mkdir '$r/dev' && ln -s /proc/self/fd/1 '$r/dev/null'"; do
		rm -rf "$r/dev.moved"
		race_box pid1-after-pivot /go "$swap" \
			sh -c 'echo ran; for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug; do
				[ -e $f ] || continue; [ "$(stat -c %t:%T $f)" = 1:3 ] && echo "masked $f" || echo "OPEN $f"; done'
		printf '%s\n' "$output"
		refute_line_re '^OPEN '
		if [ "$status" = 0 ]; then assert_line_re '^masked /proc/timer_list$'
		else [ "$status" = 125 ] && assert_line_re '^kern: sandbox setup failed: '; fi
		# the hostile rootfs is left as the swap made it
		rm -f "$r/go"
		rm -rf "$r/dev"
		mv "$r/dev.moved" "$r/dev" 2>/dev/null || mkdir -p "$r/dev"
	done
}

@test "CVE-2025-31133: a rootfs whose /dev/null is a symlink or another device, and whose /dev/console is a symlink: the box's /dev/null is kern's 1:3 and the masks hold [rootless]" {
	hostile_rootfs
	ln -s /proc/sys/kernel/core_pattern "$r/dev/null"
	ln -s /proc/sysrq-trigger "$r/dev/console"
	if is_root; then mknod "$r/dev/zero" c 1 2; mknod "$r/dev/full" b 7 0; fi
	for mode in "--rootfs $r" "--rootfs $r --bind-rootfs"; do
		run "$KERN" box cve31133 $mode -- sh -c 'stat -c "%n %F %t:%T" /dev/null /dev/zero /dev/full
			ls /dev/console 2>&1
			for f in /proc/kcore /proc/keys /proc/timer_list; do [ -e $f ] && stat -c "%n %t:%T" $f; done
			{ echo x > /proc/sys/kernel/core_pattern; } 2>/dev/null && echo core-pattern-writable; true'
		printf '%s\n' "$output"
		assert_status 0
		assert_line_re '^/dev/null character special file 1:3$'
		assert_line_re '^/dev/zero character special file 1:5$'
		assert_line_re '^/dev/full character special file 1:7$'
		assert_line_re 'No such file or directory'
		for f in /proc/kcore /proc/keys /proc/timer_list; do
			[ ! -e $f ] || assert_line_re "^$f 1:3\$"
		done
		refute_line_re core-pattern-writable
	done
	# kern's /dev is a tmpfs of its own: the rootfs is untouched
	[ "$(readlink "$r/dev/null")" = /proc/sys/kernel/core_pattern ]
}

# ---- kernel bugs reachable from a user namespace: Copy Fail
# (CVE-2026-31431, AF_ALG), Dirty Frag (CVE-2026-43284/43500, AF_RXRPC
# and xfrm), AF_PACKET (CVE-2020-14386) ----

# The probe: socket() and socketpair() of each family (and netlink
# protocol), printing "NAME ok" or "NAME <errno>".
SOCKPROBE='
import errno, socket, sys
def t(call, f, ty, p):
    try:
        r = call(f, ty, p)
        for s in (r if isinstance(r, tuple) else (r,)):
            s.close()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
cases = [("ALG", 38, 5, 0), ("RXRPC", 33, 2, 2), ("KEY", 15, 3, 2), ("VSOCK", 40, 1, 0),
         ("PACKET", 17, 3, 0), ("TIPC", 30, 5, 0), ("SMC", 43, 1, 0), ("XDP", 44, 3, 0),
         ("BLUETOOTH", 31, 3, 0), ("CAN", 29, 3, 1), ("RDS", 21, 5, 0), ("LLC", 26, 2, 0),
         ("NETLINK_XFRM", 16, 3, 6), ("NETLINK_NETFILTER", 16, 3, 12),
         ("NETLINK_CRYPTO", 16, 3, 21), ("NETLINK_GENERIC", 16, 3, 16),
         ("UNIX", 1, 1, 0), ("INET", 2, 1, 0), ("INET6", 10, 2, 0), ("NETLINK_ROUTE", 16, 3, 0),
         ("RAW_ICMP", 2, 3, 1)]
for name, f, ty, p in cases:
    print(name, t(socket.socket, f, ty, p))
print("PAIR_UNIX", t(socket.socketpair, 1, 1, 0))
print("PAIR_ALG", t(socket.socketpair, 38, 5, 0))
print("PAIR_TIPC", t(socket.socketpair, 30, 5, 0))
'

assert_families_refused() {
	for f in ALG RXRPC KEY VSOCK PACKET TIPC SMC XDP BLUETOOTH CAN RDS LLC PAIR_ALG PAIR_TIPC; do
		assert_line_re "^$f EAFNOSUPPORT\$"
	done
	for p in XFRM NETFILTER CRYPTO GENERIC; do
		assert_line_re "^NETLINK_$p EPROTONOSUPPORT\$"
	done
	# what a workload uses still works
	for f in UNIX INET INET6 NETLINK_ROUTE PAIR_UNIX; do
		assert_line_re "^$f ok\$"
	done
}

@test "CVE-2026-31431, CVE-2026-43284, CVE-2020-14386: AF_ALG, AF_RXRPC, AF_KEY, AF_VSOCK, AF_PACKET and every unused family fail in a box, in every seccomp mode and through kern exec [rootless]" {
	# Control: outside a box, in a user and network namespace of its own,
	# this kernel does open some of them (the FACT line says which).
	host=$(unshare -rn python3 -c "$SOCKPROBE" 2>&1 | grep -c ' ok$' || true)
	echo "# FACT: in a plain user+net namespace $host of the probed families and protocols open" >&3
	[ "$host" -gt 5 ]
	for mode in allowlist denylist allowlist-audit; do
		KERN_SECCOMP=$mode run "$KERN" box cvesock --image host -q -- python3 -c "$SOCKPROBE"
		assert_status 0
		assert_families_refused || { echo "mode $mode"; return 1; }
	done
	# CAP_NET_RAW stays (CAP-1's CapEff), so a raw ICMP socket on the
	# box's own loopback-only network works; AF_PACKET does not.
	assert_line_re '^RAW_ICMP ok$'
	name=cvesockx-$$
	"$KERN" box "$name" -d --image host -q -- sleep 30
	run "$KERN" exec "$name" -- python3 -c "$SOCKPROBE"
	"$KERN" stop "$name" >/dev/null 2>&1 || true
	assert_status 0
	assert_families_refused
}

@test "CVE-2026-43500: configuring xfrm fails in a box, even with --cap-add NET_ADMIN; per-socket policies need NET_ADMIN, which boxes lack [rootless]" {
	command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
	xfrm='ip xfrm policy add src 10.0.0.1 dst 10.0.0.2 dir out && echo policy-added
	ip xfrm policy list 2>&1'
	# Control: in a namespace of its own the kernel takes the policy.
	run unshare -rn sh -c "$xfrm"
	assert_line_re '^policy-added$'
	assert_line_re '^src 10.0.0.1/32 dst 10.0.0.2/32'
	for caps in "" "--cap-add NET_ADMIN"; do
		run "$KERN" box cvexfrm --image host -q $caps -- sh -c "$xfrm"
		printf '%s\n' "$output"
		refute_line_re 'policy-added|^src 10.0.0.1'
		# ip's own words for the refused socket
		assert_line_re 'Protocol not supported'
	done
	# IP_XFRM_POLICY (17) on an IPv4 socket: EPERM without CAP_NET_ADMIN
	run "$KERN" box cvexfrm2 --image host -q -- python3 -c '
import errno, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.setsockopt(socket.IPPROTO_IP, 17, b"\0" * 64); print("policy-set")
except OSError as e:
    print(errno.errorcode[e.errno])'
	assert_status 0
	[ "$output" = EPERM ]
}

# ---- crun CVE-2026-88264/88265: stdio reopened through a symlink ----
# What kern itself opens for a box's stdio is a detached box's log
# (<runtime>/logs/NAME-PID.log) and /dev/null for its stdin; the rest is
# the caller's own descriptors, passed as they are (OT-4 covers a root box
# reopening them through /proc/self/fd).

@test "CVE-2026-88264: a detached box's log directory planted as a symlink is refused, nothing written through it [rootless]" {
	victim=$BATS_TEST_TMPDIR/victim
	mkdir -p "$victim"
	"$KERN" box cvelog0 --image host -q -- true
	rt=$(runtime_dir)
	rm -rf "$rt/logs"
	ln -s "$victim" "$rt/logs"
	run --separate-stderr "$KERN" box cvelog1 -d --image host -q -- echo written
	assert_status 125
	[[ $stderr == "kern: sandbox setup failed: "*"$rt/logs"* ]]
	[ -z "$(ls -A "$victim")" ]
	rm "$rt/logs"
}

@test "CVE-2026-88265: a detached box's log file planted as a symlink to a host file is never written through [rootless]" {
	victim=$BATS_TEST_TMPDIR/victim-file
	echo original >"$victim"
	"$KERN" box cvelog2 --image host -q -- true
	rt=$(runtime_dir)
	mkdir -p "$rt/logs"
	# The log is named after the supervisor's pid: plant a link for each
	# of the next 3000 pids.
	python3 -c 'import os, sys
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for p in range(last + 1, last + 3001):
    os.symlink(sys.argv[1], "%s/cvelog3-%d.log" % (sys.argv[2], p))' "$victim" "$rt/logs"
	run --separate-stderr "$KERN" box cvelog3 -d --image host -q -- echo written
	sleep 0.5
	[ "$(cat "$victim")" = original ]
	# the planted name was hit: refused (ELOOP); a pid past the planted
	# range would have run without touching the victim either
	if [ "$status" = 125 ]; then
		[[ $stderr == "kern: sandbox setup failed: open $rt/logs/cvelog3-"*".log: "* ]]
	else
		echo "# the supervisor's pid fell outside the planted range (status $status)" >&3
	fi
	find "$rt/logs" -name 'cvelog3-*' -type l -delete
}

@test "CVE-2026-87766: a rootfs whose directories are symlinks to host directories: /dev, --tmpfs, -v targets and --workdir create nothing on the host [rootless]" {
	hostile_rootfs
	# (a /proc symlink fails every box at once: the race test covers it)
	rm -rf "$r/dev" "$r/tmp"
	for d in dev tmp work mnt; do
		host_side "$host/$d"
		ln -s "$host/$d" "$r/$d"
	done
	src=$BATS_TEST_TMPDIR/src
	mkdir -p "$src"
	for mode in "" --bind-rootfs; do
		for flags in "--tmpfs /tmp/t" "--workdir /work/sub" "-v $src:/mnt/x" ""; do
			run "$KERN" box cve87766s --rootfs "$r" $mode $flags -- sh -c 'echo ran; stat -f -c %T /proc/ /dev/'
			printf '%s\n' "$mode $flags: $status $output"
			# the box either ran on kern's own /proc and /dev, or failed
			if [ "$status" = 0 ]; then
				[ "${lines[1]}" = proc ]
				[ "${lines[2]}" = tmpfs ]
			else
				[ "$status" = 125 ]
			fi
			[ -z "$(find "$host" -mindepth 2)" ] || { echo "created on the host:"; find "$host"; return 1; }
		done
		# --bind-rootfs lets kern replace the image's /dev symlink in DIR
		# itself (MNT-9): put the hostile links back
		for d in dev tmp; do
			[ -L "$r/$d" ] || { rm -rf "$r/$d"; ln -s "$host/$d" "$r/$d"; }
		done
	done
}

@test "CVE-2026-87766: a racing loop swaps a --bind-rootfs root's /dev, /tmp and /work for symlinks to the host while 40 boxes start: nothing is created on the host, every box runs on kern's /dev and /proc or fails with 125 [rootless]" {
	r=$(mkrootfs "$BATS_TEST_TMPDIR/rootfs")
	mkdir -p "$r/dev" "$r/proc" "$r/tmp" "$r/work"
	host_side
	host=$hostdir/host-side
	host_side "$host" "$host/dev" "$host/tmp" "$host/work"
	# Markers tell the box which directory it is looking at: one of the
	# rootfs's own, or one of the host's (which must never be reachable).
	for d in dev tmp work; do
		: >"$r/$d/.rootfs-own"
		: >"$host/$d/.host-side"
	done
	# The racer: each directory is renamed away and a symlink to the host
	# put in its place, then back, as fast as one process can.
	python3 -c 'import os, sys, time
r, host, stop = sys.argv[1:4]
end = time.time() + 90
while time.time() < end and not os.path.exists(stop):
    for d in ("dev", "tmp", "work"):
        p, aside = os.path.join(r, d), os.path.join(r, "." + d)
        try:
            os.rename(p, aside)
            os.symlink(os.path.join(host, d), p)
            os.unlink(p)
            os.rename(aside, p)
        except OSError:
            pass' "$r" "$host" "$BATS_TEST_TMPDIR/stop" &
	racer=$!
	ran=0 refused=0
	for i in $(seq 40); do
		run "$KERN" box "race$i" --rootfs "$r" --bind-rootfs -q --tmpfs /tmp/t --workdir /work \
			-- sh -c 'exec 2>&-; for m in /proc/ /dev/ /tmp/t/; do
				if [ -e $m.host-side ]; then echo "$m HOST"
				elif [ -e $m.rootfs-own ]; then echo "$m rootfs-own"
				else echo "$m $(stat -f -c %T $m || echo gone)"; fi
			done'
		case $status in
		0)	# The racer goes on while the box runs and may have renamed
			# /dev or /tmp away by then ("gone"). It may also rename the
			# rootfs's own /dev back over the directory kern made in
			# place of a /dev symlink (MNT-9): the kernel then detaches
			# kern's tmpfs from the replaced directory in every mount
			# namespace, and the box sees the caller's own, empty rootfs
			# /dev ("rootfs-own"). The caller did that to their own tree;
			# the box is no less confined. A host directory ("HOST") or an
			# unmarked directory in place of kern's mounts fails the test.
			for line in "${lines[@]}"; do
				case $line in "/proc/ proc" | "/dev/ tmpfs" | "/tmp/t/ tmpfs" | *" gone" | "/dev/ rootfs-own") ;;
				*) echo "box $i: $line"; touch "$BATS_TEST_TMPDIR/stop"; return 1 ;;
				esac
			done
			ran=$((ran + 1)) ;;
		125)	refused=$((refused + 1)) ;;
		*)	echo "box $i: $status $output"; touch "$BATS_TEST_TMPDIR/stop"; return 1 ;;
		esac
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$racer" || true
	echo "# FACT: $ran boxes ran, $refused failed closed" >&3
	[ -z "$(find "$host" -mindepth 2 ! -name .host-side)" ] || { echo "created on the host:"; find "$host"; return 1; }
}
