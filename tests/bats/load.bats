# kern load: OCI layouts (directory and tar) made by `skopeo copy`, and
# docker-save archives, with the same checks as a pull; kern images, rmi.
load helper
load ../helpers/fixtures

setup_file() {
	export FIXTURES
	FIXTURES=$(fixture_busybox) || return 1
	mkdir -p "$BATS_FILE_TMPDIR/reg"
	registry_start "$BATS_FILE_TMPDIR/reg"
	registry_push "$FIXTURES/busybox:latest" busybox:v2s2 v2s2
	export REG_PID REG=127.0.0.1:$REG_PORT HAVE_EXTRACTOR
	HAVE_EXTRACTOR=$(probe_extractor busybox:v2s2)
	L=$BATS_FILE_TMPDIR/layouts
	mkdir -p "$L"
	sk() { skopeo --insecure-policy copy -q --src-tls-verify=false "$@"; }
	sk "docker://$REG/busybox:v2s2" "oci:$L/oci:v1"
	sk "docker://$REG/busybox:v2s2" "oci-archive:$L/oci.tar:v1"
	sk "docker://$REG/busybox:v2s2" "docker-archive:$L/docker.tar:example.com/team/bb:saved"
}

teardown_file() {
	registry_stop
}

setup() {
	kern_private_dirs
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	CACHE=$XDG_CACHE_HOME/kern/images
	L=$BATS_FILE_TMPDIR/layouts
}

complete_entry() {
	local k
	k=$(ls "$CACHE" | sed -n 's/\.ok$//p' | head -1)
	[ -f "$CACHE/$k.image" ] && [ -x "$CACHE/$k/bin/busybox" ] &&
		[ -z "$(ls -A "$CACHE/$k" | grep '^\.kern-')" ]
}

@test "kern load of a skopeo-made OCI layout directory, then --pull never uses it [rootless]" {
	require_extractor
	run --separate-stderr kern load -i "$L/oci" --tag local/busybox:1
	assert_status 0
	[ "$stderr" = "kern: note: loaded $L/oci as 'local/busybox:1'" ]
	complete_entry
	grep -q '^cmd	\["/bin/sh"\]$' "$CACHE"/*.image
	run kern pull --pull never local/busybox:1
	assert_status 0
	run kern images -q
	[ "$output" = "docker.io/local/busybox:1" ]
}

@test "kern load of an OCI layout tar and a docker-save archive [rootless]" {
	require_extractor
	run kern load -i "$L/oci.tar" --tag local/busybox:tar
	assert_status 0
	run kern load -i "$L/docker.tar"
	assert_status 0
	run kern images -q
	[ "${lines[0]}" = "docker.io/local/busybox:tar" ]
	[ "${lines[1]}" = "example.com/team/bb:saved" ]
	run kern pull --pull never example.com/team/bb:saved
	assert_status 0
}

@test "issue 16: the dynamic kern opens libarchive when a load needs it, and the load works [rootless]" {
	require_extractor
	file -L "$KERN_DYN" | grep -q 'dynamically linked' || skip "$KERN_DYN is not the dynamic build"
	run env LD_DEBUG=files LD_DEBUG_OUTPUT="$BATS_TEST_TMPDIR/ld" "$KERN_DYN" load -i "$L/docker.tar"
	assert_status 0
	complete_entry
	run "$KERN_DYN" images -q
	[ "$output" = "example.com/team/bb:saved" ]
	# Opened by kern itself (dlopen), not by the loader at start.
	run cat "$BATS_TEST_TMPDIR"/ld.*
	assert_line_re 'file=libarchive\.so\.[0-9]+ \[0\];  dynamically loaded by '
	# Never by the loader for kern itself (libarchive needs zlib and
	# libzstd of its own).
	refute_line_re 'file=lib(curl|archive|mbedcrypto|z|zstd)\.so\.[0-9]+ \[0\];  needed by '"$KERN_DYN"' '
}

@test "kern load: a layout with only a bare tag needs --tag; a tampered blob is refused [rootless]" {
	run --separate-stderr kern load -i "$L/oci"
	assert_status 1
	[[ $stderr == *"does not record a usable image name ('v1'); give one with --tag REF" ]]
	cp -r "$L/oci" "$BATS_TEST_TMPDIR/bad"
	chmod -R u+w "$BATS_TEST_TMPDIR/bad"
	big=$(ls -S "$BATS_TEST_TMPDIR/bad/blobs/sha256" | head -1)
	printf 'X' | dd of="$BATS_TEST_TMPDIR/bad/blobs/sha256/$big" bs=1 seek=100 conv=notrunc 2>/dev/null
	run --separate-stderr kern load -i "$BATS_TEST_TMPDIR/bad" --tag local/bad:1
	assert_status 1
	[[ $stderr == *"error: pull: blob digest mismatch (expected sha256:$big, got sha256:"* ]]
	[ -z "$(ls "$CACHE" | grep -v '\.lock$')" ]
	run kern load -i /nonexistent --tag local/x:1
	assert_status 1
	assert_line_re '^error: image: /nonexistent: No such file or directory'
}

@test "kern images lists reference, digest, size and age; kern rmi removes an entry [rootless]" {
	require_extractor
	kern load -i "$L/oci" --tag local/busybox:1 2>/dev/null
	run kern images
	assert_status 0
	[[ ${lines[0]} =~ ^REFERENCE\ +DIGEST\ +SIZE\ +AGE$ ]]
	[[ ${lines[1]} =~ ^docker.io/local/busybox:1\ +sha256:[0-9a-f]{12}\ +[0-9.]+\ MiB\ +[0-9]+s$ ]]
	run kern rmi local/busybox:1
	assert_status 0
	[ -z "$(ls -A "$CACHE")" ]
	run --separate-stderr kern rmi local/busybox:1
	assert_status 1
	[ "$stderr" = "error: image: no cached image 'local/busybox:1'" ]
}
