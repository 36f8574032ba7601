# kern pull against a real registry (Debian's docker-registry, loopback
# only) and a hostile one: security-tests.md section 9 (OCI-*, CACHE-*),
# KILL-6, CONC-5, mirrors, progress, login.
load helper
load ../helpers/fixtures

setup_file() {
	export FIXTURES
	FIXTURES=$(fixture_busybox) || { echo "cannot build the busybox fixture" >&2; return 1; }
	mkdir -p "$BATS_FILE_TMPDIR/reg" "$BATS_FILE_TMPDIR/hostile"
	registry_start "$BATS_FILE_TMPDIR/reg"
	registry_push "$FIXTURES/busybox:latest" busybox:oci oci
	registry_push "$FIXTURES/busybox:latest" busybox:v2s2 v2s2
	registry_push "$FIXTURES/busybox-multi:latest" busybox:multi oci --all
	hostile_start "$BATS_FILE_TMPDIR/hostile"
	export REG_PORT REG_PID REG_LOG HOSTILE_PORT HOSTILE_PID
	export HAVE_EXTRACTOR
	HAVE_EXTRACTOR=$(probe_extractor busybox:oci)
	export REG=127.0.0.1:$REG_PORT BAD=127.0.0.1:$HOSTILE_PORT
}

teardown_file() {
	registry_stop
	hostile_stop
}

# A test that started its own hostile registry and failed before stopping it.
teardown() {
	[ "${HOSTILE_PID:-}" = "${FILE_HOSTILE_PID:-}" ] || hostile_stop
}

setup() {
	FILE_HOSTILE_PID=$HOSTILE_PID
	kern_private_dirs
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	CACHE=$XDG_CACHE_HOME/kern/images
}

entry_complete() { # key: .ok, .image, rootfs without .kern-* leftovers
	[ -f "$CACHE/$1.ok" ] && [ -f "$CACHE/$1.image" ] && [ -d "$CACHE/$1" ] &&
		[ -z "$(ls -A "$CACHE/$1" | grep '^\.kern-')" ]
}

@test "pull of an OCI manifest fills the cache: rootfs, .ok last, .image sidecar [rootless]" {
	require_extractor
	run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[ -z "$output" ]
	k=$(key_of "$REG/busybox:oci")
	entry_complete "$k"
	[ -x "$CACHE/$k/bin/busybox" ]
	[ -L "$CACHE/$k/bin/sh" ]
	[ "$(cat "$CACHE/$k/etc/kern-fixture")" = "busybox fixture" ]
	[ "$(cat "$CACHE/$k.ok")" = "$REG/busybox:oci" ]
	[ "$(stat -c %a "$CACHE")" = 700 ]
	printf 'fmt\t3\ndigest\tsha256:[0-9a-f]{64}\nentrypoint\t\ncmd\t\["/bin/sh"\]\nenv\tPATH=/bin\nenv\tFIXTURE=busybox\nenv\tTAB=a\\\\tb\nworkdir\t/work\nuser\t\nexpose\t8080/tcp\n' >"$BATS_TEST_TMPDIR/want"
	run grep -Ezc -f "$BATS_TEST_TMPDIR/want" "$CACHE/$k.image"
	[ "$output" = 1 ] || { cat -A "$CACHE/$k.image"; false; }
	# The recorded digest is the manifest the registry serves.
	d=$(curl -s -o /dev/null -D- -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"http://$REG/v2/busybox/manifests/oci" | tr -d '\r' | sed -n 's/^Docker-Content-Digest: //Ip')
	grep -qx "digest	$d" "$CACHE/$k.image"
}

@test "issue 16: the dynamic kern opens libcurl and libarchive when a pull needs them, and the pull works [rootless]" {
	require_extractor
	file -L "$KERN_DYN" | grep -q 'dynamically linked' || skip "$KERN_DYN is not the dynamic build"
	run --separate-stderr env LD_DEBUG=files LD_DEBUG_OUTPUT="$BATS_TEST_TMPDIR/ld" "$KERN_DYN" pull "$REG/busybox:oci"
	assert_status 0
	k=$(key_of "$REG/busybox:oci")
	entry_complete "$k"
	[ "$(cat "$CACHE/$k/etc/kern-fixture")" = "busybox fixture" ]
	# Opened by kern itself (dlopen), not by the loader at start.
	run cat "$BATS_TEST_TMPDIR"/ld.*
	assert_line_re 'file=libcurl\.so\.[0-9]+ \[0\];  dynamically loaded by '
	assert_line_re 'file=libarchive\.so\.[0-9]+ \[0\];  dynamically loaded by '
	assert_line_re 'file=libmbedcrypto\.so\.[0-9]+ \[0\];  dynamically loaded by '
	# Never by the loader for kern itself (libarchive needs zlib and
	# libzstd of its own).
	refute_line_re 'file=lib(curl|archive|mbedcrypto|z|zstd)\.so\.[0-9]+ \[0\];  needed by '"$KERN_DYN"' '
}

@test "pull of a Docker schema-2 manifest [rootless]" {
	require_extractor
	run kern pull "$REG/busybox:v2s2"
	assert_status 0
	k=$(key_of "$REG/busybox:v2s2")
	entry_complete "$k"
	[ -x "$CACHE/$k/bin/busybox" ]
	grep -qx 'cmd	\["/bin/sh"\]' "$CACHE/$k.image"
}

@test "an index with several platforms: host arch by default, --platform picks, none lists the arches [rootless]" {
	require_extractor
	run kern pull "$REG/busybox:multi"
	assert_status 0
	k=$(key_of "$REG/busybox:multi")
	grep -qx 'env	FIXTURE_ARCH=amd64' "$CACHE/$k.image"
	rm -rf "$CACHE"
	run kern pull --platform linux/arm64 "$REG/busybox:multi"
	assert_status 0
	grep -qx 'env	FIXTURE_ARCH=arm64' "$CACHE/$k.image"
	rm -rf "$CACHE"
	run kern pull --platform s390x "$REG/busybox:multi"
	assert_status 0
	grep -qx 'env	FIXTURE_ARCH=s390x' "$CACHE/$k.image"
	rm -rf "$CACHE"
	run --separate-stderr kern pull --platform ppc64le "$REG/busybox:multi"
	assert_status 1
	[[ $stderr == *"error: image: $REG/busybox:multi: no linux/ppc64le image in the index (it offers linux: amd64, arm64, s390x)"* ]]
	[ ! -e "$CACHE/$k.ok" ]
	run kern pull --platform windows/amd64 "$REG/busybox:multi"
	assert_status 1
	assert_line_re '^error: image: --platform'
}

@test "OCI-7: index without linux/host arch lists the arches; attestation entries are skipped [rootless]" {
	require_extractor
	run --separate-stderr kern pull --platform amd64 "$BAD/noarch:1"
	assert_status 1
	[[ $stderr == *"no linux/amd64 image in the index (it offers linux: arm64, riscv64)" ]]
	run kern pull --platform amd64 "$BAD/attest:1"
	assert_status 0
}

@test "a complete entry is used without the registry [rootless]" {
	require_extractor
	kern pull "$REG/busybox:oci"
	before=$(wc -l <"$REG_LOG")
	run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[ -z "$stderr" ]
	[ "$(wc -l <"$REG_LOG")" = "$before" ]
}

@test "OCI-1: bad references exit 1 with error: image: and create nothing [rootless]" {
	long=$(printf 'a%.0s' $(seq 300))
	for ref in "" "../etc/passwd" "a/../../b" "/absolute" ".." "x:y:z:w" "UP/per" "a b" \
		"$(printf 'a\tb')" "x:$long" "name@sha256:short" "a@sha256:$(printf '%064d' 0)@x" \
		"a@sha256:$(printf 'A%.0s' $(seq 64))" "réf"; do
		run --separate-stderr kern pull "$ref"
		[ "$status" -eq 1 ] || { echo "ref '$ref': status $status"; false; }
		[[ $stderr == "error: image: bad image reference '$ref': "* ]] || { echo "ref '$ref': $stderr"; false; }
	done
	# A NUL cannot travel in argv; the C unit tests cover it (test_image.c).
	[ ! -e "$XDG_CACHE_HOME" ]
	run kern pull --platform amd64 "$REG/UPPER:1"
	assert_status 1
	[ ! -e "$XDG_CACHE_HOME" ]
}

@test "OCI-2: a config or layer whose bytes are not its digest is refused, nothing cached [rootless]" {
	for repo in lying-config lying-layer; do
		run --separate-stderr kern pull "$BAD/$repo:1"
		assert_status 1
		[[ $stderr =~ error:\ pull:\ blob\ digest\ mismatch\ \(expected\ sha256:[0-9a-f]{64},\ got\ sha256:[0-9a-f]{64}\)\ -\ refusing ]] || { echo "$stderr"; false; }
		k=$(key_of "$BAD/$repo:1")
		[ ! -e "$CACHE/$k" ]
		[ ! -e "$CACHE/$k.ok" ]
		[ ! -e "$CACHE/$k.image" ]
	done
}

@test "OCI-3: a digest-pinned manifest with other bytes; an index entry that lies [rootless]" {
	require_extractor
	pin=sha256:$(printf '%064d' 7)
	run --separate-stderr kern pull "$BAD/pinned@$pin"
	assert_status 1
	[[ $stderr =~ error:\ manifest:\ manifest\ digest\ mismatch\ \(expected\ $pin,\ got\ sha256:[0-9a-f]{64}\)\ -\ refusing$ ]]
	run --separate-stderr kern pull "$BAD/index-lie:1"
	assert_status 1
	[[ $stderr =~ error:\ manifest:\ manifest\ digest\ mismatch\ \(expected\ sha256:[0-9a-f]{64},\ got\ sha256:[0-9a-f]{64}\)\ -\ refusing ]]
	# A digest reference that does match is pulled.
	d=$(curl -s "http://$BAD/v2/good/manifests/1" | sha256sum | cut -c1-64)
	run kern pull "$BAD/good@sha256:$d"
	assert_status 0
}

@test "OCI-4: diff_id mismatch and diff_id count are refused [rootless]" {
	require_extractor
	run --separate-stderr kern pull "$BAD/bad-diffid:1"
	assert_status 1
	[[ $stderr =~ error:\ pull:\ layer\ 1\ diff_id\ mismatch\ \(expected\ sha256:[0-9a-f]{64},\ got\ sha256:[0-9a-f]{64}\)\ -\ refusing ]]
	run --separate-stderr kern pull "$BAD/diffid-count:1"
	assert_status 1
	[[ $stderr == *"error: pull: "*"2 diff_ids for 1 layers - refusing" ]]
	[ -z "$(ls "$CACHE" | grep -v '\.lock$')" ]
}

@test "OCI-5: hostile manifests exit 1 cleanly; urls are never fetched [rootless]" {
	for repo in badjson deep huge schema1 nolayers many upper nonsha dupkeys urls; do
		run --separate-stderr kern pull "$BAD/$repo:1"
		[ "$status" -eq 1 ] || { echo "$repo: status $status $stderr"; false; }
		[[ $stderr =~ ^(kern:\ note:.*$'\n')?error:\ (manifest|registry):\  ]] || { echo "$repo: $stderr"; false; }
		case $repo in
		schema1) [[ $stderr == *"schema 1 manifests are not supported - refusing" ]] ;;
		nolayers) [[ $stderr == *"no layers in manifest" ]] ;;
		many) [[ $stderr == *"513 layers (the limit is 512)"* ]] ;;
		huge) [[ $stderr == *"larger than 8000000 bytes"* ]] ;;
		deep) [[ $stderr == *"nested too deeply"* ]] ;;
		dupkeys) [[ $stderr == *"duplicate key"* ]] ;;
		upper|nonsha) [[ $stderr == *"sha256: plus 64 lowercase hex"* ]] ;;
		urls) [[ $stderr == *"external urls"* ]] ;;
		esac
	done
	! grep -q '/external' "$BATS_FILE_TMPDIR/hostile/requests.log" || false
}

@test "OCI-6: hostile configs exit 1 cleanly [rootless]" {
	for repo in cfg-badjson cfg-huge cfg-envnum cfg-entrystr; do
		run --separate-stderr kern pull "$BAD/$repo:1"
		[ "$status" -eq 1 ] || { echo "$repo: status $status"; false; }
		[[ $stderr == *"error: pull: "* ]] || { echo "$repo: $stderr"; false; }
	done
}

@test "OCI-11: TOOMANYREQUESTS and MANIFEST_UNKNOWN bodies [rootless]" {
	run --separate-stderr kern pull "$BAD/ratelimit:1"
	assert_status 1
	[[ $stderr == *"error: registry: $BAD/ratelimit:1: rate limited by the registry (TOOMANYREQUESTS)"* ]]
	run --separate-stderr kern pull "$BAD/nosuchrepo:1"
	assert_status 1
	[[ $stderr == *"error: registry: $BAD/nosuchrepo:1: manifest unknown" ]]
	run --separate-stderr kern pull "$REG/busybox:typo"
	assert_status 1
	[[ $stderr == *"error: registry: $REG/busybox:typo: manifest unknown" ]]
}

@test "OCI-9: more than 10 redirects refused; a slow drip hits the time limit [rootless]" {
	require_extractor
	run --separate-stderr kern pull "$BAD/redirect-loop:1"
	assert_status 1
	[[ $stderr == *"more than 10 redirects"* ]]
	run kern pull "$BAD/redirect-ok:1"
	assert_status 0
	[ -x "$TREE/build/test/kern" ] || skip "no test build (build/test/kern)"
	start=$SECONDS
	KERN_TEST_HTTP_TIMEOUT=2 run --separate-stderr "$TREE/build/test/kern" pull "$BAD/slow:1"
	assert_status 1
	[[ $stderr == *"timed out (limit 2 s)"* ]] || { echo "$stderr"; false; }
	[ $((SECONDS - start)) -lt 10 ]
}

@test "OCI-8: realm on another host or on http: credentials withheld with a warning [rootless]" {
	require_extractor
	for mode in bearer-otherhost bearer-httprealm; do
		mkdir -p "$BATS_TEST_TMPDIR/$mode"
		hostile_start "$BATS_TEST_TMPDIR/$mode" "$mode"
		printf 's3cret-pw\n' | kern login "127.0.0.1:$HOSTILE_PORT" -u kern --password-stdin
		run --separate-stderr kern pull "127.0.0.1:$HOSTILE_PORT/good:1"
		hostile_stop
		assert_status 0
		[[ $stderr == *"kern: warning: withholding credentials - 127.0.0.1:$HOSTILE_PORT pointed its auth to a different host (http://"*"/token); fetching an anonymous token instead"* ]]
		grep -q '^GET /token' "$BATS_TEST_TMPDIR/$mode/requests.log"
		! grep -q 'auth=Basic' "$BATS_TEST_TMPDIR/$mode/requests.log" || false
	done
}

@test "OCI-8: Basic without credentials exits 1 mentioning authentication; with them it pulls [rootless]" {
	require_extractor
	mkdir -p "$BATS_TEST_TMPDIR/basic"
	hostile_start "$BATS_TEST_TMPDIR/basic" basic
	run --separate-stderr kern pull "127.0.0.1:$HOSTILE_PORT/good:1"
	assert_status 1
	[[ $stderr == *"error: registry: "*"requires authentication"* ]]
	printf 's3cret-pw\n' | kern login "127.0.0.1:$HOSTILE_PORT" -u kern --password-stdin
	[ "$(stat -c %a "$XDG_CONFIG_HOME/kern/credentials")" = 600 ]
	run kern pull "127.0.0.1:$HOSTILE_PORT/good:1"
	hostile_stop
	assert_status 0
	! grep -q BAD-BASIC "$BATS_TEST_TMPDIR/basic/requests.log" || false
	grep -q 'manifests/1 auth=Basic' "$BATS_TEST_TMPDIR/basic/requests.log"
}

@test "OCI-8, OCI-9: over https, credentials follow a same-host realm; a redirect to plain http is refused [rootless]" {
	require_extractor
	[ -x "$TREE/build/test/kern" ] || skip "no test build (build/test/kern)"
	d=$BATS_TEST_TMPDIR/tls
	mkdir -p "$d"
	tls_material "$d"
	hostile_start "$d" tls
	# The test build trusts the throw-away CA and resolves registry.test to
	# loopback; a release build has neither hook.
	export KERN_TEST_CA_BUNDLE=$d/ca.pem KERN_TEST_RESOLVE=registry.test:$HOSTILE_PORT:127.0.0.1
	printf 's3cret-pw\n' | kern login "registry.test:$HOSTILE_PORT" -u kern --password-stdin
	run --separate-stderr "$TREE/build/test/kern" pull "registry.test:$HOSTILE_PORT/good:1"
	assert_status 0
	[[ $stderr != *withholding* ]]
	grep -q '^GET /token?service=hostile&scope=repository:good:pull auth=Basic' "$d/requests.log"
	grep -q 'manifests/1 auth=Bearer' "$d/requests.log"
	run --separate-stderr "$TREE/build/test/kern" pull "registry.test:$HOSTILE_PORT/redirect-http:1"
	assert_status 1
	[[ $stderr == *"redirect to plain http (127.0.0.1) refused"* ]]
	# Without the test CA, the certificate does not verify: refused.
	KERN_TEST_CA_BUNDLE= run --separate-stderr "$TREE/build/test/kern" pull "registry.test:$HOSTILE_PORT/good:2"
	hostile_stop
	assert_status 1
	[[ $stderr == *"cannot reach the registry"*"certificate"* ]] || { echo "$stderr"; false; }
}

@test "OCI-8: a 9 MB token is refused [rootless]" {
	mkdir -p "$BATS_TEST_TMPDIR/bigtoken"
	hostile_start "$BATS_TEST_TMPDIR/bigtoken" bigtoken
	run --separate-stderr kern pull "127.0.0.1:$HOSTILE_PORT/good:1"
	hostile_stop
	assert_status 1
	[[ $stderr == *"error: registry: "*"token request failed"*"larger than 8000000 bytes"* ]]
}

@test "OCI-10: no credential on any argv or environ during an authenticated pull [rootless]" {
	require_extractor
	local d=$BATS_TEST_TMPDIR/basic pw pats=$BATS_TEST_TMPDIR/secrets
	mkdir -p "$d"
	# A password of this run's own (the hostile registry reads it from its
	# directory): make check runs this test as another user at the same
	# time, and the scan below looks at every process.
	pw="s3cret-$$-$RANDOM-pw"
	printf '%s\n' "$pw" >"$d/password"
	# The scan's patterns, the password and its Basic form, come from a
	# file, so that grep's own argv holds neither.
	printf '%s\n' "$pw" "$(printf 'kern:%s' "$pw" | base64 -w0)" >"$pats"
	hostile_start "$d" basic
	printf '%s\n' "$pw" | kern login "127.0.0.1:$HOSTILE_PORT" -u kern --password-stdin
	kern pull "127.0.0.1:$HOSTILE_PORT/slow:1" 2>"$BATS_TEST_TMPDIR/pull.err" &
	pid=$!
	# Positive control: the scan does see a credential on an argv.
	sh -c 'sleep 2' "$pw" &
	ctl=$!
	sleep 0.2
	grep -alsqF -f "$pats" /proc/[0-9]*/cmdline
	kill "$ctl"; wait "$ctl" 2>/dev/null || true
	found=0 scans=0
	# One grep over every process.
	while kill -0 "$pid" 2>/dev/null && [ $scans -lt 10 ]; do
		if grep -alsF -f "$pats" /proc/[0-9]*/cmdline /proc/[0-9]*/environ; then
			found=1
		fi
		scans=$((scans + 1))
		sleep 0.3
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	hostile_stop
	[ $scans -ge 3 ]	# the scan ran while the pull was alive
	[ $found = 0 ]
	# The pull authenticated, with this run's password.
	grep -q 'auth=Basic' "$d/requests.log"
	! grep -q BAD-BASIC "$d/requests.log" || false
	# kern login refuses a password on argv.
	run kern login "127.0.0.1:1" -u kern -p "$pw"
	assert_status 1
}

@test "CACHE-1: a missing rootfs, missing .image or leftover temps are re-fetched with a note [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:oci")
	kern pull "$REG/busybox:oci"
	rm -rf "${CACHE:?}/$k"
	run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[ "$stderr" = "kern: note: image '$REG/busybox:oci' is cached without a usable rootfs; fetching it again" ]
	entry_complete "$k"
	rm "$CACHE/$k.image"
	run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[ "$stderr" = "kern: note: image '$REG/busybox:oci' is cached without its config; fetching it again" ]
	entry_complete "$k"
	mkdir "$CACHE/$k/.kern-stg-0-x"
	run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[[ $stderr == *"without a usable rootfs; fetching it again" ]]
	entry_complete "$k"
}

@test "CACHE-2: --pull never fails closed on an incomplete entry, uses a complete one [rootless]" {
	require_extractor
	run --separate-stderr kern pull --pull never "$REG/busybox:oci"
	assert_status 1
	[ "$stderr" = "error: image: image '$REG/busybox:oci' is not usable locally (it needs its rootfs, its sentinel and its config sidecar) and --pull never was given" ]
	[ ! -e "$XDG_CACHE_HOME" ]
	kern pull "$REG/busybox:oci"
	k=$(key_of "$REG/busybox:oci")
	rm "$CACHE/$k.image"
	run kern pull --pull never "$REG/busybox:oci"
	assert_status 1
	assert_line_re -- '--pull never was given$'
	kern pull "$REG/busybox:oci"
	run --separate-stderr kern pull --pull never "$REG/busybox:oci"
	assert_status 0
	[ -z "$stderr" ]
}

@test "CACHE-3, KILL-6: SIGKILL of a pull at 100 random points never leaves .ok without rootfs and .image [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:v2s2")
	for i in $(seq 100); do
		kern pull "$REG/busybox:v2s2" 2>/dev/null &
		pid=$!
		sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		if [ -e "$CACHE/$k.ok" ]; then
			entry_complete "$k" || { echo "iteration $i: .ok without a complete entry"; ls -la "$CACHE" "$CACHE/$k"; false; }
		fi
		# The lock is free again.
		[ ! -e "$CACHE/$k.lock" ] || flock -n "$CACHE/$k.lock" true
		[ $((i % 25)) -ne 0 ] || rm -rf "$CACHE"
	done
	run kern pull "$REG/busybox:v2s2"
	assert_status 0
	entry_complete "$k"
}

@test "KILL-6: a pull killed at each phase (manifest, mid-blob, merge, sidecar, .ok) is repaired by the next pull [rootless]" {
	require_extractor
	[ -x "$TREE/build/test/kern" ] || skip "no test build (build/test/kern)"
	k=$(key_of "$REG/busybox:oci")
	for phase in pull-fetch pull-manifest pull-blob pull-merge pull-sidecar pull-ok; do
		rm -rf "$CACHE"
		KERN_TEST_PAUSE=$phase "$TREE/build/test/kern" pull "$REG/busybox:oci" 2>"$BATS_TEST_TMPDIR/err" &
		pid=$!
		for _ in $(seq 100); do grep -q "paused at $phase" "$BATS_TEST_TMPDIR/err" && break; sleep 0.05; done
		grep -q "kern-test: paused at $phase" "$BATS_TEST_TMPDIR/err" || { cat "$BATS_TEST_TMPDIR/err"; false; }
		kill -9 "$pid"
		wait "$pid" 2>/dev/null || true
		[ ! -e "$CACHE/$k.ok" ]
		flock -n "$CACHE/$k.lock" true
		run kern pull "$REG/busybox:oci"
		assert_status 0
		entry_complete "$k"
	done
}

@test "KILL-6: kern gc removes the rootfs a pull killed before its sentinel left, not one a pull is writing [rootless]" {
	require_extractor
	[ -x "$TREE/build/test/kern" ] || skip "no test build (build/test/kern)"
	k=$(key_of "$REG/busybox:oci")
	KERN_TEST_PAUSE=pull-sidecar "$TREE/build/test/kern" pull "$REG/busybox:oci" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for _ in $(seq 100); do grep -q "paused at pull-sidecar" "$BATS_TEST_TMPDIR/err" && break; sleep 0.05; done
	grep -q "kern-test: paused at pull-sidecar" "$BATS_TEST_TMPDIR/err" || { cat "$BATS_TEST_TMPDIR/err"; false; }
	# The pull holds its lock: gc leaves the entry it is writing alone.
	run kern gc
	assert_status 0
	[ -f "$CACHE/$k/etc/kern-fixture" ]
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	[ ! -e "$CACHE/$k.ok" ]
	[ -f "$CACHE/$k/etc/kern-fixture" ]
	run --separate-stderr kern gc
	assert_status 0
	[ "$stderr" = "kern: note: removed incomplete entry $CACHE/$k" ] || { echo "$stderr"; false; }
	[ -z "$(ls -A "$CACHE")" ] || { ls -la "$CACHE"; false; }
	run kern pull "$REG/busybox:oci"
	assert_status 0
	entry_complete "$k"
}

@test "CACHE-5: symlinks planted at <key>, <key>.lock, <key>.ok are not followed; refused [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:oci")
	mkdir -p "$CACHE" "$BATS_TEST_TMPDIR/target"
	echo keep >"$BATS_TEST_TMPDIR/target/canary"
	for s in "" .lock .ok; do
		rm -rf "$CACHE"; mkdir -p "$CACHE"
		ln -s "$BATS_TEST_TMPDIR/target" "$CACHE/$k$s"
		run --separate-stderr kern pull "$REG/busybox:oci"
		assert_status 1
		[[ $stderr == *"error: image: "*"refusing"* ]] || { echo "$s: $stderr"; false; }
		[ "$(ls -A "$BATS_TEST_TMPDIR/target")" = canary ]
		[ "$(cat "$BATS_TEST_TMPDIR/target/canary")" = keep ]
		[ -L "$CACHE/$k$s" ]
	done
}

@test "CACHE-6: a re-pull of the same digest writes a byte-identical .image; cache root 0700 [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:oci")
	kern pull "$REG/busybox:oci"
	cp "$CACHE/$k.image" "$BATS_TEST_TMPDIR/first"
	rm -rf "$CACHE"
	kern pull "$REG/busybox:oci"
	cmp "$CACHE/$k.image" "$BATS_TEST_TMPDIR/first"
	kern pull --pull always "$REG/busybox:oci" 2>/dev/null
	cmp "$CACHE/$k.image" "$BATS_TEST_TMPDIR/first"
	[ "$(stat -c %a "$CACHE")" = 700 ]
}

@test "CACHE-4: --pull always swaps in a fresh copy; a user of the old one keeps it; gc retires it [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:oci")
	kern pull "$REG/busybox:oci"
	# A process living in the old tree stands in for a box's mounted lower.
	(cd "$CACHE/$k/etc" && exec sleep 30) &
	holder=$!
	run --separate-stderr kern pull --pull always "$REG/busybox:oci"
	assert_status 0
	entry_complete "$k"
	old=$(ls "$CACHE" | grep "^$k\.old-")
	[ -n "$old" ]
	[ "$(readlink /proc/$holder/cwd)" = "$CACHE/$old/etc" ]
	[ "$(cat /proc/$holder/cwd/kern-fixture)" = "busybox fixture" ]
	kill "$holder"; wait "$holder" 2>/dev/null || true
	run kern gc
	assert_status 0
	[ -z "$(ls "$CACHE" | grep "^$k\.old-")" ]
	entry_complete "$k"
}

@test "CONC-5: eight concurrent pulls of one uncached image fetch each blob once [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:v2s2")
	: >"$BATS_TEST_TMPDIR/rcs"
	for i in $(seq 8); do
		(kern pull "$REG/busybox:v2s2" 2>/dev/null; echo $? >>"$BATS_TEST_TMPDIR/rcs") &
	done
	wait
	[ "$(grep -c '^0$' "$BATS_TEST_TMPDIR/rcs")" = 8 ]
	entry_complete "$k"
	layer=$(curl -s -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
		"http://$REG/v2/busybox/manifests/v2s2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
	before=$(registry_blob_gets "$layer")
	rm -rf "$CACHE"
	for i in $(seq 8); do kern pull "$REG/busybox:v2s2" 2>/dev/null & done
	wait
	[ "$(registry_blob_gets "$layer")" = $((before + 1)) ]
}

@test "mirrors: a dead mirror falls back to the registry; mirrors-only never leaves them [rootless]" {
	require_extractor
	KERN_REGISTRY_MIRRORS="$REG=http://127.0.0.1:1" run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[[ $stderr == *"kern: note: mirror http://127.0.0.1:1 failed ("*"); trying the next source"* ]]
	rm -rf "$CACHE"
	KERN_REGISTRY_MIRRORS="$REG=http://127.0.0.1:1" KERN_REGISTRY_MIRRORS_ONLY=1 run kern pull "$REG/busybox:oci"
	assert_status 1
	# A registry that does not exist, served by its mirror: the key stays the reference's.
	KERN_REGISTRY_MIRRORS="mirror.invalid=http://$REG" KERN_REGISTRY_MIRRORS_ONLY=1 run kern pull mirror.invalid/busybox:oci
	assert_status 0
	entry_complete "$(key_of mirror.invalid/busybox:oci)"
	[ "$(cat "$CACHE/$(key_of mirror.invalid/busybox:oci).ok")" = "mirror.invalid/busybox:oci" ]
	KERN_REGISTRY_MIRRORS="docker.io=http://mirror.example.com" run --separate-stderr kern pull busybox
	assert_status 1
	[[ $stderr == *"uses plain http on a non-loopback host - refusing" ]]
}

@test "progress: a pipe gets only the note line, KERN_QUIET nothing, a terminal a redrawn line [rootless]" {
	require_extractor
	run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[ "$stderr" = "kern: note: image '$REG/busybox:oci' is not cached; pulling it once" ]
	rm -rf "$CACHE"
	KERN_QUIET=1 run --separate-stderr kern pull "$REG/busybox:oci"
	assert_status 0
	[ -z "$stderr" ]
	rm -rf "$CACHE"
	script -qec "$KERN pull $REG/busybox:oci" "$BATS_TEST_TMPDIR/tty" >/dev/null
	grep -q $'\rpulling layer 1/1: ' "$BATS_TEST_TMPDIR/tty"
	grep -q "kern: note: image '$REG/busybox:oci' is not cached" "$BATS_TEST_TMPDIR/tty"
}

@test "kern-pull chains: exec the rest of its argv after the pull [rootless]" {
	require_extractor
	run --separate-stderr kern-pull "$REG/busybox:oci" -- /bin/echo chained
	assert_status 0
	[ "$output" = chained ]
}
