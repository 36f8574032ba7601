# kern box --image with pulled images: the config applied (Env, WorkingDir,
# User, Entrypoint, Cmd), the Python image, CONC-5/CONC-6 with boxes,
# CACHE-4 with a running box, kern rmi while a box runs.
load helper
load plan
load ../helpers/fixtures

setup_file() {
	export FIXTURES PY_FIXTURES=
	FIXTURES=$(fixture_busybox) || return 1
	PY_FIXTURES=$(fixture_python) || PY_FIXTURES=
	mkdir -p "$BATS_FILE_TMPDIR/reg"
	registry_start "$BATS_FILE_TMPDIR/reg"
	registry_push "$FIXTURES/busybox:latest" busybox:oci oci
	registry_push "$FIXTURES/busybox-user:latest" busybox:user v2s2
	[ -z "$PY_FIXTURES" ] || registry_push "$PY_FIXTURES/python:latest" python:3 v2s2
	export REG_PID REG_LOG REG=127.0.0.1:$REG_PORT HAVE_EXTRACTOR
	HAVE_EXTRACTOR=$(probe_extractor busybox:oci)
}

teardown_file() {
	registry_stop
}

setup() {
	kern_private_dirs
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	CACHE=$XDG_CACHE_HOME/kern/images
}

teardown() {
	# Boxes a test left detached.
	for r in "$XDG_RUNTIME_DIR"/kern/instances/*; do
		[ -f "$r" ] || continue
		kill -9 "$(sed -n 's/^supervisor\t//p' "$r")" 2>/dev/null || true
	done
}

@test "box --image pulls once and applies Env and WorkingDir [rootless]" {
	require_extractor
	run --separate-stderr kern box b1 --image "$REG/busybox:oci" -- sh -c 'echo "$FIXTURE|$TAB|$PATH"; pwd'
	assert_status 0
	[ "${lines[0]}" = "busybox|a	b|/bin" ]
	[ "${lines[1]}" = /work ]
	[ "$stderr" = "kern: note: image '$REG/busybox:oci' is not cached; pulling it once" ]
	run --separate-stderr kern box b1 --image "$REG/busybox:oci" --workdir /tmp -- pwd
	assert_status 0
	[ "$output" = /tmp ] && [ -z "$stderr" ]
}

@test "plan: a cached registry image's chain runs like kern box: Env with a tab, WorkingDir, the cache as lower [rootless]" {
	require_extractor
	[ -x "$TREE/build/kern-static" ] || skip "no static build (make static); a dynamic kern cannot exec itself inside the image's root"
	kern pull "$REG/busybox:oci" 2>/dev/null
	use_static_chain
	plan=$("$KERN" box pimg --image "$REG/busybox:oci" --plan -- true)
	[[ $plan == *"kern-fs --root overlay --lower $CACHE/"* ]]
	[[ $plan == *"kern-ns --uid-range-if-available"* ]]
	[[ $plan == *"--env FIXTURE=busybox"* ]]
	compare_plan pimg --image "$REG/busybox:oci" -e X=1
}

@test "box --image applies Entrypoint and Cmd; --entrypoint \"\" clears it [rootless]" {
	require_extractor
	run --separate-stderr kern box b2 --image "$REG/busybox:user" --user 0
	assert_status 0
	[ "$output" = "from-entrypoint default-cmd" ] || { echo "got: $output"; false; }
	run kern box b2 --image "$REG/busybox:user" --user 0 -- given args
	[ "$output" = "from-entrypoint given args" ]
	run kern box b2 --image "$REG/busybox:user" --user 0 --entrypoint "" -- /bin/echo bare
	[ "$output" = bare ]
	run kern box b2 --image "$REG/busybox:user" --user 0 --entrypoint /bin/pwd
	[ "$output" = /home/app ]
}

@test "box --image applies the image User, resolved in the image's own passwd" {
	require_extractor
	require_root
	grep -q "^root:" /etc/subuid 2>/dev/null || skip "a non-root image User needs a subordinate id range for root in /etc/subuid"
	run --separate-stderr kern box b3 --image "$REG/busybox:user" --entrypoint "" -- id
	assert_status 0
	[ "$output" = "uid=1000(app) gid=1000(app) groups=1000(app)" ]
}

@test "a box from the pulled Python image runs python3 -c [rootless]" {
	require_extractor
	[ -n "$PY_FIXTURES" ] || skip "the Python fixture needs a root run with debootstrap and the Debian mirror first"
	run --separate-stderr kern box py --image "$REG/python:3" -- python3 -c 'import sys; print(6 * 7, sys.version_info[0])'
	assert_status 0
	[ "$output" = "42 3" ]
	run kern box py --image "$REG/python:3" --pull never -- python3 -c 'import os; print(os.environ["LANG"])'
	[ "$output" = C.UTF-8 ]
}

@test "CONC-5: 8 kern pull plus 8 box --pull missing of one uncached image: each blob fetched once [rootless]" {
	require_extractor
	layer=$(curl -s -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"http://$REG/v2/busybox/manifests/oci" | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
	before=$(registry_blob_gets "$layer")
	: >"$BATS_TEST_TMPDIR/rcs"
	for i in $(seq 8); do
		(kern pull "$REG/busybox:oci" 2>/dev/null; echo "pull $?" >>"$BATS_TEST_TMPDIR/rcs") &
		(kern box "c5-$i" --image "$REG/busybox:oci" --pull missing -- true 2>/dev/null
		 echo "box $?" >>"$BATS_TEST_TMPDIR/rcs") &
	done
	wait
	[ "$(grep -c ' 0$' "$BATS_TEST_TMPDIR/rcs")" = 16 ] || { cat "$BATS_TEST_TMPDIR/rcs"; false; }
	[ "$(registry_blob_gets "$layer")" = $((before + 1)) ]
	k=$(key_of "$REG/busybox:oci")
	[ -f "$CACHE/$k.ok" ] && [ -f "$CACHE/$k.image" ] && [ -x "$CACHE/$k/bin/busybox" ]
}

@test "CONC-6: 4 concurrent box --pull never on a complete entry all run [rootless]" {
	require_extractor
	kern pull "$REG/busybox:oci" 2>/dev/null
	: >"$BATS_TEST_TMPDIR/out"
	for i in 1 2 3 4; do
		(kern box "c6-$i" --image "$REG/busybox:oci" --pull never -- echo ran >>"$BATS_TEST_TMPDIR/out") &
	done
	wait
	[ "$(grep -c '^ran$' "$BATS_TEST_TMPDIR/out")" = 4 ]
}

@test "CACHE-4: --pull always while a box uses the old image; gc keeps the retired copy until it ends [rootless]" {
	require_extractor
	k=$(key_of "$REG/busybox:oci")
	kern pull "$REG/busybox:oci" 2>/dev/null
	kern box c4 -d --image "$REG/busybox:oci" -- sleep 60 >/dev/null
	sup=$(sed -n 's/^supervisor\t//p' "$XDG_RUNTIME_DIR/kern/instances/c4")
	run kern pull --pull always "$REG/busybox:oci"
	assert_status 0
	old=$(ls "$CACHE" | grep "^$k\.old-")
	[ -n "$old" ]
	run kern gc
	[ -d "$CACHE/$old" ]
	# The running box still reads its (old) lower.
	pid1=$(sed -n 's/^pid1\t//p' "$XDG_RUNTIME_DIR/kern/instances/c4")
	[ "$(kern exec c4 -- cat /etc/kern-fixture)" = "busybox fixture" ]
	run --separate-stderr kern rmi "$REG/busybox:oci"
	assert_status 1
	[ "$stderr" = "error: image: image '$REG/busybox:oci' is in use by a running box - refusing" ]
	kill -9 "$sup"
	for _ in $(seq 50); do [ -e "/proc/$pid1" ] || break; sleep 0.1; done
	run kern gc
	assert_status 0
	[ ! -e "$CACHE/$old" ]
	run kern rmi "$REG/busybox:oci"
	assert_status 0
}
