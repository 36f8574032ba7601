#!/usr/bin/env bats
# Security matrix section 8 (EG-1..EG-14), FD-1/FD-3 for the egress
# processes: `kern box --egress-allow` and the kern-egress applet tested for
# real. "The host" is a network namespace each test creates
# (tests/helpers/egress-ns: only lo, test servers on it); the box runs
# inside it with --image host. No test sends a byte anywhere else. The test
# build maps test names to the local servers (KERN_EGRESS_TEST_HOSTS); the
# release build is proven to ignore it.
load helper

TK=$TREE/build/test/kern
H=$TREE/tests/helpers
# Debian's interpreter: a version manager's shim can take a second to start.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
CLIENT="$PY $H/egress-client.py"

setup_file() {
	export EG=$BATS_FILE_TMPDIR/egress
	mkdir -p "$EG"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$EG/key.pem" -out "$EG/cert.pem" -days 2 \
		-subj /CN=test.example -addext "subjectAltName=DNS:test.example,DNS:*.test.example" \
		>/dev/null 2>&1
	# proxy_of PID prints the kern-egress children of PID (zombies included).
	cat >"$EG/proxy_of.sh" <<-'EOF'
		proxy_of() { ps -eo pid=,ppid=,comm= | awk -v p="$1" '$2 == p && $3 == "kern-egress" { print $1 }'; }
	EOF
}

setup() {
	kern_private_dirs
	# Shell text for scripts: defines proxy_of.
	PROXY_OF=". $EG/proxy_of.sh"
	[ -s "$EG/cert.pem" ] || skip "openssl could not make the throwaway certificate"
	command -v curl >/dev/null || skip "curl is not installed"
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare -rn true 2>/dev/null || skip "unprivileged user and network namespaces are not available"
}

# in_box ALLOW SCRIPT [FLAG...]: SCRIPT (sh) runs in `kern box
# --egress-allow ALLOW` (the test build); kern's own lines go to
# $BATS_TEST_TMPDIR/kern.err, the box's stderr too unless SCRIPT says 2>&1.
in_box() {
	local allow=$1 script=$2
	shift 2
	"$H/egress-ns" "$EG" "$TK" box "eg$BATS_TEST_NUMBER" --image host -v "$TREE:$TREE:ro" \
		-v "$EG:$EG" --egress-allow "$allow" "$@" -- sh -c "$script" 2>"$BATS_TEST_TMPDIR/kern.err"
}

# in_chain ALLOW SCRIPT: the same from the applets (tests/helpers/egress-box):
# kern-egress forks the proxy, `kern-egress --attach` joins it to a new
# network namespace where SCRIPT runs.
in_chain() {
	"$H/egress-ns" "$EG" "$H/egress-box" "$TK" "$1" sh -c "$2"
}

# in_host SCRIPT: SCRIPT runs as the host side, test servers up.
in_host() {
	"$H/egress-ns" "$EG" sh -c "$1"
}

refute_conn() { # the servers saw no connection matching REGEX
	! grep -Eq -- "$1" "$EG/conn.log" || { echo "unexpected connection:"; cat "$EG/conn.log"; return 1; }
}

@test "EG-1: HTTPS through CONNECT to an allowed name, with curl [rootless]" {
	run in_box test.example "curl -sS -v --cacert $EG/cert.pem https://test.example/one 2>&1"
	assert_status 0
	assert_line_re '^< HTTP/1.1 200 Connection Established'
	assert_line_re '^server=web-tls line=GET /one HTTP/1.1 host=test.example body=$'
}

@test "EG-1: Python urllib over HTTPS through the box's proxy variables [rootless]" {
	run in_box test.example "$CLIENT urllib https://test.example/py $EG/cert.pem"
	assert_status 0
	assert_line_re '^server=web-tls line=GET /py HTTP/1.1 host=test.example body=$'
}

@test "EG-13: the box gets the four proxy variables, and they are what the listener serves [rootless]" {
	run in_box test.example 'env | grep -i _proxy= | sort'
	assert_status 0
	[ "${#lines[@]}" -eq 4 ]
	for v in HTTPS_PROXY HTTP_PROXY http_proxy https_proxy; do
		assert_line_re "^$v=http://127.0.0.1:3128\$"
	done
}

@test "plain HTTP to an allowed name goes upstream in origin form, its body unchanged [rootless]" {
	run in_box test.example "curl -sS http://test.example/plain?q=1 && curl -sS -d a=b http://files.test.example/post"
	assert_status 0
	assert_line_re '^server=web line=GET /plain\?q=1 HTTP/1.1 host=test.example body=$'
	assert_line_re '^server=web line=POST /post HTTP/1.1 host=files.test.example body=a=b$'
}

# RFC 9112 §3.2: toward an origin server the request line is in origin
# form. Python's http.server answers an absolute-form line 404.
@test "plain HTTP reaches Python's http.server: curl and urllib get the file [rootless]" {
	run in_box test.example "curl -sS http://pyweb.test.example/hello.txt && $CLIENT urllib http://pyweb.test.example/hello.txt $EG/cert.pem"
	assert_status 0
	[ "${lines[0]}" = "hello from http.server" ]
	[ "${lines[1]}" = "hello from http.server" ]
	[ "$(grep -c '^pyweb-request GET /hello.txt HTTP/1.1 host=pyweb.test.example .*code=200$' "$EG/conn.log")" -eq 2 ]
	refute_conn '^pyweb-request .*code=404'
	# Hop-by-hop fields (curl and urllib send Proxy-Connection, Connection)
	# stay with the proxy; the server is told the connection closes.
	refute_conn '^pyweb-request .*fields=.*(proxy-|keep-alive)'
	[ "$(grep -c '^pyweb-request .*fields=.*connection' "$EG/conn.log")" -eq 2 ]
}

@test "EG-9: a plain request carries only the Host that was checked, whatever the client sent [rootless]" {
	run in_box test.example "$CLIENT exchange 'GET http://pyweb.test.example/hello.txt HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic eDp5\r\nX-Kept: 1\r\n\r\n'
		$CLIENT exchange 'GET /hello.txt HTTP/1.1\r\nHost: PyWeb.Test.Example.:80\r\n\r\n'"
	assert_status 0
	assert_line_re '^HTTP/1.1 200 OK$'
	[ "$(grep -c '^pyweb-request GET /hello.txt HTTP/1.1 host=pyweb.test.example fields=host,x-kept,connection body= code=200$' "$EG/conn.log")" -eq 1 ]
	grep -q '^pyweb-request GET /hello.txt HTTP/1.1 host=pyweb.test.example. fields=host,connection body= code=200$' "$EG/conn.log"
	refute_conn 'authorization'
	refute_conn '^evil'
}

# One checked request per connection: the proxy forwards the first
# request's body (by its Content-Length) and not a byte more, and tells
# the server to close. A request pipelined behind it, whatever it names,
# never reaches the server, though this server would serve it.
@test "one request per connection: a request behind the first never reaches the server [rootless]" {
	run in_box test.example "
		$CLIENT exchange 'GET http://pyweb.test.example/hello.txt HTTP/1.1\r\nHost: pyweb.test.example\r\n\r\nGET /secret HTTP/1.1\r\nHost: evil.example\r\n\r\n'
		$CLIENT exchange 'POST http://pyweb.test.example/echo HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /secret2 HTTP/1.1\r\nHost: pyweb.test.example\r\n\r\n'
		$CLIENT exchange 'POST http://pyweb.test.example/empty HTTP/1.1\r\nContent-Length: 0\r\n\r\nGET /secret3 HTTP/1.1\r\nHost: pyweb.test.example\r\n\r\n'"
	assert_status 0
	[ "$output" = "$(printf 'HTTP/1.1 200 OK\nEOF\nHTTP/1.1 200 OK\nEOF\nHTTP/1.1 200 OK\nEOF')" ]
	grep -q '^pyweb-request GET /hello.txt HTTP/1.1 host=pyweb.test.example .*code=200$' "$EG/conn.log"
	grep -q '^pyweb-request POST /echo HTTP/1.1 host=pyweb.test.example .*body=abc code=200$' "$EG/conn.log"
	grep -q '^pyweb-request POST /empty HTTP/1.1 .*body= code=200$' "$EG/conn.log"
	refute_conn 'secret'
	[ "$(grep -c '^pyweb-request' "$EG/conn.log")" -eq 3 ]
}

@test "a chunked body gets 411, an unclear Content-Length 400, and the server sees nothing [rootless]" {
	run in_box test.example "$CLIENT raw \
		'POST http://pyweb.test.example/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' \
		'POST http://pyweb.test.example/echo HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n' \
		'POST http://pyweb.test.example/echo HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd' \
		'POST http://pyweb.test.example/echo HTTP/1.1\r\nContent-Length: -1\r\n\r\n'"
	assert_status 0
	[ "$output" = "$(printf 'HTTP/1.1 411 Length Required\nHTTP/1.1 400 Bad Request\nHTTP/1.1 400 Bad Request\nHTTP/1.1 400 Bad Request')" ]
	refute_conn '^pyweb'
}

@test "EG-8: a subdomain is allowed; evil<domain> and <domain>.evil.com get 403 [rootless]" {
	run in_box test.example "
		curl -sS --cacert $EG/cert.pem https://files.test.example/sub
		for h in eviltest.example test.example.evil.com; do
			curl -sS --cacert $EG/cert.pem https://\$h/ 2>&1
			curl -sS -o /dev/null -w '%{http_code}\n' http://\$h/
		done"
	assert_line_re '^server=web-tls line=GET /sub HTTP/1.1 host=files.test.example'
	[ "$(grep -c 'CONNECT tunnel failed, response 403' <<<"$output")" -eq 2 ]
	[ "$(grep -cx 403 <<<"$output")" -eq 2 ]
	refute_conn '^evil'
}

@test "EG-2: an unlisted name: curl sees 403, urllib sees 'Tunnel connection failed: 403 Forbidden' [rootless]" {
	run in_box test.example "
		curl -sS --cacert $EG/cert.pem https://evil.example/ 2>&1
		$CLIENT urllib https://evil.example/ $EG/cert.pem"
	assert_line_re 'CONNECT tunnel failed, response 403'
	assert_line_re 'Tunnel connection failed: 403 Forbidden'
	refute_conn '^evil'
}

@test "EG-8: case and a trailing dot are ignored; userinfo and [::1] cannot sneak past [rootless]" {
	run in_box test.example "
		$CLIENT raw 'CONNECT TEST.Example.:443 HTTP/1.1\r\n\r\n' \
			'CONNECT test.example@evil.example:443 HTTP/1.1\r\n\r\n' \
			'CONNECT [::1]:443 HTTP/1.1\r\n\r\n' \
			'GET http://test.example@evil.example/ HTTP/1.1\r\n\r\n'"
	assert_status 0
	[ "${lines[0]}" = "HTTP/1.1 200 Connection Established" ]
	[ "${lines[1]}" = "HTTP/1.1 403 Forbidden" ]
	[ "${lines[2]}" = "HTTP/1.1 403 Forbidden" ]
	[ "${lines[3]}" = "HTTP/1.1 403 Forbidden" ]
	refute_conn '^(evil|canary)'
}

@test "EG-3: IP literals are refused with 403, in every spelling [rootless]" {
	run in_box test.example "
		$CLIENT raw 'CONNECT 1.2.3.4:443 HTTP/1.1\r\n\r\n' \
			'GET http://1.2.3.4/ HTTP/1.1\r\n\r\n' \
			'CONNECT 127.1:443 HTTP/1.1\r\n\r\n' \
			'CONNECT 2130706433:443 HTTP/1.1\r\n\r\n' \
			'CONNECT [::ffff:127.0.0.1]:443 HTTP/1.1\r\n\r\n' \
			'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'"
	assert_status 0
	[ "${#lines[@]}" -eq 6 ]
	[ "$(grep -cx 'HTTP/1.1 403 Forbidden' <<<"$output")" -eq 6 ]
	refute_conn .
}

@test "EG-6: ports other than 80 and 443 are refused with 403 [rootless]" {
	run in_box test.example "
		$CLIENT raw 'CONNECT test.example:22 HTTP/1.1\r\n\r\n' \
			'CONNECT test.example:8443 HTTP/1.1\r\n\r\n' \
			'CONNECT test.example:8080 HTTP/1.1\r\n\r\n'
		curl -sS -o /dev/null -w '%{http_code}\n' http://test.example:8080/
		$CLIENT raw 'CONNECT test.example:80 HTTP/1.1\r\n\r\n'"
	assert_status 0
	[ "$(grep -cx 'HTTP/1.1 403 Forbidden' <<<"$output")" -eq 3 ]
	[ "${lines[3]}" = 403 ]
	[ "${lines[4]}" = "HTTP/1.1 200 Connection Established" ]
}

@test "EG-12: localhost through the proxy is refused with 403 [rootless]" {
	run in_box test.example "
		$CLIENT raw 'CONNECT localhost:443 HTTP/1.1\r\n\r\n'
		curl -sS -o /dev/null -w '%{http_code}\n' http://localhost/"
	[ "${lines[0]}" = "HTTP/1.1 403 Forbidden" ]
	[ "${lines[1]}" = 403 ]
	refute_conn .
}

@test "EG-5: a bare LF, a malformed request line or a missing host is answered 400 [rootless]" {
	run in_box test.example "
		$CLIENT raw 'CONNECT test.example:443 HTTP/1.1\n\n' \
			'GET http://test.example/ HTTP/1.1\r\nX-A: 1\nX-B: 2\r\n\r\n' \
			'GET http://test.example/ HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n' \
			'HELLO\r\n\r\n' \
			'GET / HTTP/1.1\r\n\r\n' \
			'GET / HTTP/1.1\r\nHost: test.example\r\nHost: evil.example\r\n\r\n'"
	assert_status 0
	[ "${#lines[@]}" -eq 6 ]
	[ "$(grep -cx 'HTTP/1.1 400 Bad Request' <<<"$output")" -eq 6 ]
	refute_conn .
}

@test "EG-5: a head over 16 KiB is answered 400; exactly 16 KiB is served [rootless]" {
	run in_box test.example "
		$CLIENT big 20480
		$CLIENT exact 16385
		$CLIENT exact 16384"
	assert_status 0
	[ "${lines[0]}" = "HTTP/1.1 400 Bad Request" ]
	[ "${lines[1]}" = "HTTP/1.1 400 Bad Request" ]
	[ "${lines[2]}" = "HTTP/1.1 200 OK" ]
}

@test "EG-5: a dripping head is closed at the total head timeout, a silent one at the per-read timeout [rootless]" {
	# The test build shortens 30 s / 30 s to 1.5 s per read and 3 s in all.
	export KERN_EGRESS_TEST_TIMEOUTS=1500,3000,300000
	run in_box test.example "$CLIENT drip 1; $CLIENT drip 10"
	assert_status 0
	[[ ${lines[0]} =~ ^closed\ after\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -ge 2 ]
	[ "${BASH_REMATCH[1]}" -le 4 ]
	[[ ${lines[1]} =~ ^closed\ after\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -ge 1 ]
	[ "${BASH_REMATCH[1]}" -le 2 ]
	refute_conn .
}

@test "EG-7: names resolving to non-public addresses get 502 and no connection is attempted [rootless]" {
	names="lo4 meta ten cgnat lo6 ula mapped nat64 sixto4"
	run in_box test.example "
		set --
		for n in $names; do
			set -- \"\$@\" \"CONNECT \$n.test.example:443 HTTP/1.1\r\n\r\n\" \"GET http://\$n.test.example/ HTTP/1.1\r\n\r\n\"
		done
		$CLIENT raw \"\$@\""
	assert_status 0
	[ "${#lines[@]}" -eq 18 ]
	[ "$(grep -cx 'HTTP/1.1 502 Bad Gateway' <<<"$output")" -eq 18 ]
	refute_conn .
	# Control: a connection that does happen to those addresses is logged.
	run in_host "$PY -c 'import socket
for a in (\"127.0.0.1\", \"10.0.0.1\", \"169.254.169.254\", \"100.64.0.1\"):
    socket.create_connection((a, 443)).close()' && sleep 0.3"
	assert_status 0
	[ "$(grep -c '^canary ' "$EG/conn.log")" -eq 4 ]
}

@test "a name resolving to the host's own public address gets 502, no connection [rootless]" {
	run in_box test.example "$CLIENT raw 'CONNECT self.test.example:443 HTTP/1.1\r\n\r\n' 'GET http://self.test.example/ HTTP/1.1\r\n\r\n'"
	assert_status 0
	[ "${lines[0]}" = "HTTP/1.1 502 Bad Gateway" ]
	[ "${lines[1]}" = "HTTP/1.1 502 Bad Gateway" ]
	refute_conn .
	# Control: the address does answer on the host side.
	run in_host "$PY -c 'import socket; socket.create_connection((\"1.2.3.4\", 443)).close()' && sleep 0.3"
	assert_status 0
	grep -q '^canary 443$' "$EG/conn.log"
}

@test "a name whose DNS never answers gets 502 and does not stall the other tunnels [rootless]" {
	run in_box test.example "
		t0=\$(date +%s%N)
		curl -sS -o /dev/null -w 'slow %{http_code}\n' http://dns-slow.test.example/ &
		sleep 0.2
		curl -sS -o /dev/null -w 'fast %{http_code}\n' http://test.example/
		echo fast_ms=\$(( (\$(date +%s%N) - t0) / 1000000 ))
		wait"
	assert_status 0
	assert_line_re '^fast 200$'
	assert_line_re '^slow 502$'
	# The fast one finished while the slow name was still waiting (timeout:1).
	[[ $output =~ fast_ms=([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -lt 900 ]
	grep -q '^dns-slow.test.example A$' "$EG/dns.log"
}

@test "EG-7: one public and one private record refuse the whole name [rootless]" {
	run in_box test.example "$CLIENT raw 'CONNECT mixed.test.example:443 HTTP/1.1\r\n\r\n'"
	[ "$output" = "HTTP/1.1 502 Bad Gateway" ]
	refute_conn .
}

@test "a name that does not resolve gets 502 [rootless]" {
	run in_box test.example "$CLIENT raw 'CONNECT nowhere.test.example:443 HTTP/1.1\r\n\r\n'"
	[ "$output" = "HTTP/1.1 502 Bad Gateway" ]
}

@test "EG-9: an absolute URI to a listed host with Host: evil.example reaches only the listed host [rootless]" {
	run in_box test.example "
		curl -sS -H 'Host: evil.example' http://test.example/nine
		$CLIENT raw 'GET http://evil.example/ HTTP/1.1\r\nHost: test.example\r\n\r\n'"
	assert_status 0
	assert_line_re '^server=web line=GET /nine HTTP/1.1 host=test.example body=$'
	[ "${lines[1]}" = "HTTP/1.1 403 Forbidden" ]
	refute_conn '^evil'
	grep -q '^web ' "$EG/conn.log"
}

@test "200 parallel tunnels: 128 carry bytes at once, the other 72 get 503 [rootless]" {
	run in_box test.example "$CLIENT tunnels 200 echo.test.example"
	assert_status 0
	assert_line_re '^128 HTTP/1.1 200 Connection Established$'
	assert_line_re '^72 HTTP/1.1 503 Service Unavailable$'
	assert_line_re '^echoed 128$'
}

@test "EG-11: 3000 connections: one proxy process, 128 tunnels, the rest 503, the proxy serves again after [rootless]" {
	run in_host "$PROXY_OF
		$TK box eg11 --image host -v $TREE:$TREE:ro -v $EG:$EG --egress-allow test.example -- sh -c '
			$CLIENT storm 3000 echo.test.example
			touch $EG/stormed
			while [ ! -e $EG/counted ]; do sleep 0.05; done
			$CLIENT raw \"CONNECT echo.test.example:443 HTTP/1.1\r\n\r\n\"' 2>/dev/null &
		sup=\$!
		while [ ! -e $EG/stormed ]; do sleep 0.05; done
		p=\$(proxy_of \$sup)
		echo procs=\$(proxy_of \$sup | wc -l) threads=\$(ls /proc/\$p/task | wc -l)
		touch $EG/counted
		wait \$sup"
	rm -f "$EG/stormed" "$EG/counted"
	assert_status 0
	assert_line_re '^128 HTTP/1.1 200 Connection Established$'
	assert_line_re '^2872 HTTP/1.1 503 Service Unavailable$'
	# One process: the event loop and at most four resolver threads.
	assert_line_re '^procs=1 threads=[2-5]$'
	assert_line_re '^HTTP/1.1 200 Connection Established$'
}

@test "half-close: a client that shuts down writing still gets every byte back [rootless]" {
	run in_box test.example "$CLIENT halfclose echo.test.example 3000000"
	assert_status 0
	[ "$output" = "echoed 3000000" ]
}

@test "bytes sent right behind the CONNECT head go through the tunnel [rootless]" {
	run in_box test.example "$CLIENT pipelined echo.test.example"
	assert_status 0
	[ "$output" = "b'HTTP/1.1 200 Connection Established\\r\\n\\r\\nfirst-bytes\\n'" ]
}

@test "an idle tunnel is closed at the idle timeout, not before [rootless]" {
	export KERN_EGRESS_TEST_TIMEOUTS=30000,30000,1500
	run in_box test.example "$CLIENT idle echo.test.example 0.5; $CLIENT idle echo.test.example 4"
	assert_status 0
	[ "${lines[0]}" = open ]
	[ "${lines[1]}" = closed ]
}

@test "EG-3, EG-4: in the box a raw socket to an IP gets ENETUNREACH and names do not resolve [rootless]" {
	run in_box test.example "$PY -c '
import errno, socket
for fam, addr in ((socket.AF_INET, (\"1.2.3.4\", 443)), (socket.AF_INET6, (\"2606:4700::1111\", 443))):
    s = socket.socket(fam)
    print(errno.errorcode[s.connect_ex(addr)])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b\"x\", (\"8.8.8.8\", 53))
    print(\"sent\")
except OSError as e:
    print(errno.errorcode[e.errno])
try:
    socket.getaddrinfo(\"test.example\", 443)
    print(\"resolved\")
except socket.gaierror:
    print(\"no-resolve\")
'"
	assert_status 0
	[ "${lines[0]}" = ENETUNREACH ]
	[ "${lines[1]}" = ENETUNREACH ]
	[ "${lines[2]}" = ENETUNREACH ]
	[ "${lines[3]}" = no-resolve ]
}

@test "proxy killed mid-box: 3128 refuses, there is no other way out, nothing is left [rootless]" {
	run in_host "$PROXY_OF
		$TK box eg-kill --image host -v $EG:$EG --egress-allow test.example -- sh -c '
			curl -sS -o /dev/null -w \"%{http_code}\n\" http://test.example/
			touch $EG/box-ready
			while [ ! -e $EG/box-go ]; do sleep 0.05; done
			curl -sS -m 5 http://test.example/ 2>&1; echo curl=\$?
			curl -sS -m 5 --noproxy \"*\" http://1.2.3.4/ 2>&1; echo direct=\$?' 2>/dev/null &
		sup=\$!
		while [ ! -e $EG/box-ready ]; do sleep 0.05; done
		p=\$(proxy_of \$sup)
		kill -9 \$p
		touch $EG/box-go
		wait \$sup; echo box=\$?
		[ -e /proc/\$p ] && echo left=\$(cut -d' ' -f3 /proc/\$p/stat) || echo left=none"
	rm -f "$EG/box-ready" "$EG/box-go"
	assert_status 0
	[ "${lines[0]}" = 200 ]
	assert_line_re '^curl=7$'
	assert_line_re '^direct=7$'
	assert_line_re '^box=0$'
	# The supervisor reaped the dead proxy at teardown: not even a zombie.
	assert_line_re '^left=none$'
}

@test "teardown: the proxy ends with the box, even where the supervisor may not signal it [rootless]" {
	run in_host "$PROXY_OF
		$TK box eg-end --image host --egress-allow test.example -- sleep 1 2>/dev/null &
		sup=\$!
		for _ in \$(seq 100); do p=\$(proxy_of \$sup); [ -n \"\$p\" ] && break; sleep 0.02; done
		echo proxy=\$(cat /proc/\$p/comm)
		wait \$sup; echo box=\$?
		[ -e /proc/\$p ] && echo left=\$(cut -d' ' -f3 /proc/\$p/stat) || echo left=none"
	assert_status 0
	assert_line_re '^proxy=kern-egress$'
	assert_line_re '^box=0$'
	assert_line_re '^left=none$'
}

@test "EG-14: the proxy is gone within 1 s of its supervisor being SIGKILLed [rootless]" {
	run in_host "$PROXY_OF
		$TK box eg14 --image host --egress-allow test.example -- sleep 30 2>/dev/null &
		sup=\$!
		for _ in \$(seq 100); do p=\$(proxy_of \$sup); [ -n \"\$p\" ] && break; sleep 0.02; done
		echo proxy=\$(cat /proc/\$p/comm)
		kill -9 \$sup
		t0=\$(date +%s%N)
		while [ -d /proc/\$p ] && [ \"\$(cut -d' ' -f3 /proc/\$p/stat 2>/dev/null)\" != Z ]; do
			[ \$(( \$(date +%s%N) - t0 )) -gt 1000000000 ] && { echo alive; exit 1; }
			sleep 0.02
		done
		echo gone"
	assert_status 0
	[ "${lines[0]}" = proxy=kern-egress ]
	[ "${lines[1]}" = gone ]
}

@test "FD-3: the proxy holds no inherited descriptor: not the started fd, not kern's stdout [rootless]" {
	run in_host "$PROXY_OF
		exec 5>$BATS_TEST_TMPDIR/started
		KERN_STARTED_FD=5 $TK box eg-fd3 --image host --egress-allow test.example -- sleep 1 >$BATS_TEST_TMPDIR/out 2>&1 &
		sup=\$!
		for _ in \$(seq 100); do p=\$(proxy_of \$sup); [ -n \"\$p\" ] && break; sleep 0.02; done
		for f in /proc/\$p/fd/*; do echo \"fd \${f##*/} \$(readlink \$f)\"; done
		wait \$sup"
	assert_status 0
	# stdio on /dev/null, the control socket, and what the proxy made itself.
	assert_line_re '^fd 0 /dev/null$'
	assert_line_re '^fd 1 /dev/null$'
	assert_line_re '^fd 2 /dev/null$'
	assert_line_re '^fd 3 socket:'
	refute_line_re "$BATS_TEST_TMPDIR"
	refute_line_re '^fd [0-9]+ /(work|tmp|home|root)'
}

@test "FD-3: a client reading kern-egress's pipes sees EOF while the proxy lives on [rootless]" {
	run in_host "$PROXY_OF
		exec 5>$BATS_TEST_TMPDIR/held
		start=\$(date +%s)
		$TK egress --allow test.example -- sh -c '$PROXY_OF
			p=\$(proxy_of \$\$)
			echo alive=\$(cat /proc/\$p/comm)
			exec >/dev/null 2>&1 5>&-
			sleep 2' | { cat; echo eof=\$(( \$(date +%s) - start )); }"
	assert_status 0
	assert_line_re '^alive=kern-egress$'
	# EOF when the caller's side closed the pipe, not 2 s later.
	assert_line_re '^eof=[01]$'
}

@test "FD-1: the egress box sees only 0 1 2 [rootless]" {
	# Listed by a plain child: mid-pipeline the shell would hold a pipe end.
	run in_box test.example 'ls /proc/$$/fd'
	assert_status 0
	[ "$(echo $output)" = "0 1 2" ]
}

@test "as root the proxy runs as uid 65534 with no capability and no_new_privs" {
	require_root
	run in_host "$PROXY_OF
		$TK box eg-root --image host --egress-allow test.example -- sleep 1 2>/dev/null &
		sup=\$!
		for _ in \$(seq 100); do p=\$(proxy_of \$sup); [ -n \"\$p\" ] && break; sleep 0.02; done
		grep -E '^(Uid|Gid|Groups|CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/\$p/status
		wait \$sup"
	assert_status 0
	assert_line_re '^Uid:[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534$'
	assert_line_re '^Gid:[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534$'
	assert_line_re '^Groups:[[:space:]]*$'
	assert_line_re '^CapEff:[[:space:]]+0000000000000000$'
	assert_line_re '^CapPrm:[[:space:]]+0000000000000000$'
	assert_line_re '^CapBnd:[[:space:]]+0000000000000000$'
	assert_line_re '^NoNewPrivs:[[:space:]]+1$'
}

@test "without root the proxy keeps no capability either [rootless]" {
	run in_chain test.example "$PROXY_OF
		grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/\$(proxy_of \$\$)/status"
	assert_status 0
	assert_line_re '^CapEff:[[:space:]]+0000000000000000$'
	assert_line_re '^CapPrm:[[:space:]]+0000000000000000$'
	assert_line_re '^CapBnd:[[:space:]]+0000000000000000$'
	assert_line_re '^NoNewPrivs:[[:space:]]+1$'
}

@test "the release build ignores KERN_EGRESS_TEST_HOSTS and does not even contain the hooks [rootless]" {
	# Control: the test build carries them.
	grep -qa KERN_EGRESS_TEST_HOSTS "$TK"
	grep -qa KERN_EGRESS_TEST_TIMEOUTS "$TK"
	! grep -qa KERN_EGRESS_TEST_HOSTS "$KERN" || false
	! grep -qa KERN_EGRESS_TEST_TIMEOUTS "$KERN" || false
	run "$H/egress-ns" "$EG" "$KERN" box eg-rel --image host --egress-allow test.example \
		-- curl -sS -o /dev/null -w '%{http_code}\n' http://test.example/
	[ "${lines[-1]}" = 502 ]
	refute_conn .
	run in_box test.example "curl -sS -o /dev/null -w '%{http_code}\n' http://test.example/"
	[ "$output" = 200 ]
}

@test "EG-1 with the release build: real DNS, a public address, HTTPS and HTTP end to end [rootless]" {
	# 1.1.1.1 lives in a namespace made for the test, behind a veth pair.
	export EGRESS_NS_PUBLIC=1
	run "$H/egress-ns" "$EG" "$KERN" box eg-pub --image host -v "$EG:$EG:ro" --egress-allow test.example -- sh -c "
		curl -sS --cacert $EG/cert.pem https://dns-public.test.example/tls
		curl -sS http://dns-public.test.example/plain
		$PY -c 'import socket; socket.getaddrinfo(\"dns-public.test.example\", 443)' 2>&1 | tail -1"
	assert_status 0
	assert_line_re '^server=public-tls line=GET /tls HTTP/1.1 host=dns-public.test.example body=$'
	assert_line_re '^server=public line=GET /plain HTTP/1.1 host=dns-public.test.example body=$'
	# The box itself resolves nothing; the proxy asked once per request.
	assert_line_re 'gaierror'
	[ "$(grep -c '^dns-public.test.example A$' "$EG/dns.log")" -eq 2 ]
	[ "$(grep -c '^dns-public.test.example AAAA$' "$EG/dns.log")" -eq 2 ]
	[ "$(wc -l <"$EG/dns.log")" -eq 4 ]
}

@test "EG-7 with the release build: a private, mixed, mapped-metadata or host-own DNS answer gets 502; names are asked once, never with the search domain [rootless]" {
	names="dns-private dns-mixed dns-mixed6 dns-meta dns-self nx"
	run "$H/egress-ns" "$EG" "$KERN" box eg-dns --image host --egress-allow test.example -- sh -c "
		for n in $names; do curl -sS -o /dev/null -w '%{http_code}\n' http://\$n.test.example/; done"
	assert_status 0
	[ "$(grep -cx 502 <<<"$output")" -eq 6 ]
	refute_conn .
	for n in $names; do
		[ "$(grep -c "^$n.test.example A$" "$EG/dns.log")" -eq 1 ]
		[ "$(grep -c "^$n.test.example AAAA$" "$EG/dns.log")" -eq 1 ]
	done
	[ "$(wc -l <"$EG/dns.log")" -eq 12 ]
	# Control: an ordinary lookup of the same missing name tries the search list.
	run in_host "getent ahosts nx.test.example; cat $EG/dns.log"
	assert_line_re '^nx.test.example.corp.test.example A$'
}

@test "the applet chain printed by --plan makes the same egress box, and leaves nothing behind [rootless]" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -s "$TK" "$BATS_TEST_TMPDIR/bin/kern-cg"
	"$TK" box eg-plan --image host -v "$EG:$EG:ro" --egress-allow test.example --plan -- sh -c "
		curl -sS --cacert $EG/cert.pem https://test.example/chain
		curl -sS -o /dev/null -w '%{http_code}\n' http://evil.example/
		ls /proc/\$\$/fd
		env | grep -ci _proxy=
		sleep 1" >"$BATS_TEST_TMPDIR/plan.sh"
	grep -q -- '--egress-fd' "$BATS_TEST_TMPDIR/plan.sh"
	run in_host "$PROXY_OF
		PATH=$BATS_TEST_TMPDIR/bin:\$PATH sh $BATS_TEST_TMPDIR/plan.sh 2>/dev/null &
		sup=\$!
		for _ in \$(seq 100); do p=\$(proxy_of \$sup); [ -n \"\$p\" ] && break; sleep 0.02; done
		wait \$sup; echo box=\$?
		echo seen=\${p:-none}
		[ -n \"\$p\" ] && [ -e /proc/\$p ] && echo left=\$(cut -d' ' -f3 /proc/\$p/stat) || echo left=none"
	printf '%s\n' "$output"	# shown when an assertion below fails
	assert_status 0
	[ "${lines[0]}" = "server=web-tls line=GET /chain HTTP/1.1 host=test.example body=" ]
	[ "${lines[1]}" = 403 ]
	# The shell's descriptors, listed by a plain child: mid-pipeline or
	# mid-redirection the shell itself holds one more.
	[ "${lines[2]} ${lines[3]} ${lines[4]}" = "0 1 2" ]
	[ "${lines[5]}" = 4 ]
	assert_line_re '^box=0$'
	# The proxy was seen while the box ran (the box lingers a second for
	# that), so left=none below says it is gone, not that it was missed.
	assert_line_re '^seen=[0-9]+$'
	assert_line_re '^left=none$'
}

@test "EG-10: kern box refuses bad --egress-allow entries, and --egress-allow with --net or -d [rootless]" {
	long=$(printf 'a%.0s' $(seq 64)).com
	for e in -a.com a..b "$long" 1.2.3.4 '*' com 'pypi.org,-x.org'; do
		run --separate-stderr "$KERN" box eg10 --image host --egress-allow "$e" -- true
		assert_status 1
		grep -q '^error: box: ' <<<"$stderr"
	done
	for flag in --net "--net host" "--network host" -d; do
		run --separate-stderr "$KERN" box eg10 --image host --egress-allow pypi.org $flag -- true
		assert_status 1
		grep -q '^error: box: ' <<<"$stderr"
	done
}

@test "the start note says what the box can reach; -q silences it [rootless]" {
	run in_box test.example 'true'
	assert_status 0
	grep -qx 'kern: note: this box reaches only test.example and its subdomains, through an HTTP CONNECT/forward proxy at http://127.0.0.1:3128; it has no other route' "$BATS_TEST_TMPDIR/kern.err"
	run in_box test.example 'true' -q
	assert_status 0
	[ ! -s "$BATS_TEST_TMPDIR/kern.err" ]
}

@test "EG-10: kern-egress refuses invalid entries with exit 1 [rootless]" {
	long=$(printf 'a%.0s' $(seq 64)).com
	for e in -a.com a..b "$long" 1.2.3.4 '*' com pypi.org,-x.org '' 'a.com,'; do
		run --separate-stderr "$KERN" egress --allow "$e" -- echo ran
		assert_status 1
		[ -z "$output" ]
		grep -q '^error: box: kern-egress: invalid --egress-allow domain' <<<"$stderr"
		grep -q '^hint: ' <<<"$stderr"
	done
}

@test "kern-egress usage errors exit 1 [rootless]" {
	for args in "--allow a.com" "--allow a.com --" "--attach --allow a.com -- true" "-- true" \
		"--allow a.com --fd 2 -- true" "--allow a.com --bogus -- true"; do
		run --separate-stderr "$KERN" egress $args
		assert_status 1
		grep -q '^error: box: kern-egress: ' <<<"$stderr"
	done
}

@test "fail closed: a proxy that cannot start warns and the box runs with no route [rootless]" {
	# Room for one more descriptor: the control socketpair cannot be made.
	# The box side raises the limit again before it runs.
	cat >"$BATS_TEST_TMPDIR/box.sh" <<-EOF
		exec unshare -rn $TK egress --attach -- sh -c 'echo pid=\${KERN_EGRESS_PID:-none}; curl -sS -m 5 -x http://127.0.0.1:3128 http://test.example/ 2>&1; echo curl=\$?'
	EOF
	run in_host "$PY -c 'import os, resource
os.closerange(3, 65536)
resource.setrlimit(resource.RLIMIT_NOFILE, (4, 4096))
os.execv(\"$TK\", [\"kern\", \"egress\", \"--allow\", \"test.example\", \"--\", \"sh\", \"-c\", \"ulimit -n 1024; exec sh $BATS_TEST_TMPDIR/box.sh\"])'"
	assert_line_re '^kern: warning: egress filter failed to start \(socketpair: Too many open files\); the box has NO outbound$'
	assert_line_re '^pid=none$'
	assert_line_re '^curl=7$'
}

@test "fail closed: 127.0.0.1:3128 taken in the box: warning, the proxy is reaped, no route [rootless]" {
	cat >"$BATS_TEST_TMPDIR/box.sh" <<-EOF
		$PROXY_OF
		echo pid=\${KERN_EGRESS_PID:-none}
		echo proxies=\$(proxy_of \$\$ | wc -l)
	EOF
	cat >"$BATS_TEST_TMPDIR/netns.sh" <<-EOF
		ip link set lo up 2>/dev/null || /usr/sbin/ip link set lo up
		$PY -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 3128)); time.sleep(1.2)' &
		sleep 0.5
		exec $TK egress --attach -- sh $BATS_TEST_TMPDIR/box.sh
	EOF
	run in_host "$TK egress --allow test.example -- unshare -rn sh $BATS_TEST_TMPDIR/netns.sh"
	assert_line_re '^kern: warning: egress filter failed to start \(listen on 127.0.0.1:3128 in the box network namespace: Address already in use\); the box has NO outbound$'
	assert_line_re '^pid=none$'
	# No kern-egress child is left, not even a zombie: it was reaped.
	assert_line_re '^proxies=0$'
}

@test "--attach without a proxy descriptor runs NEXT quietly [rootless]" {
	run --separate-stderr unshare -rn "$KERN" egress --attach -- echo next
	assert_status 0
	[ "$output" = next ]
	[ -z "$stderr" ]
}
