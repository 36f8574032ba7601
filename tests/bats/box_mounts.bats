#!/usr/bin/env bats
# kern box: binds that hold their flags below every submount, --image
# host's /etc, /dev/shm and /dev/mqueue, -v sources created without
# following symlinks (security-tests.md section 12: OT-3, OT-6, OT-9,
# OT-10).
load helper

setup() { kern_private_dirs; }

teardown() {
	[ -z "${shared:-}" ] || rm -rf "$shared"
}

# A directory the test user can read, with a runtime directory of its own
# inside ($shared/run); as_user runs a command as that user. As root only.
shared_for_user() {
	require_root
	"$TREE/tests/helpers/test-user" >/dev/null
	shared=$(mktemp -d /tmp/kern-mounts.XXXXXX)
	chmod 755 "$shared"
	install -d -o kerntest -m 700 "$shared/run"
	"${as_user[@]}" "$KERN" --version >/dev/null 2>&1 ||
		skip "kerntest cannot run $KERN (the tree is not world-readable; tests/run makes a readable copy)"
}
as_user=(runuser -u kerntest -- env -i PATH=/usr/bin:/bin)

# The script that runs in a private mount namespace (unshare -m): the
# submounts it makes never reach the host's table (MNT-13 runs alongside).
ot3_script() {
	cat <<EOF
set -u
mount -t tmpfs -o mode=1777 tmpfs '$shared/v/sub' || exit 99
mount -t tmpfs -o mode=1777 tmpfs /usr/local || exit 99
mount -t tmpfs -o mode=1777 tmpfs '$shared/r/sub' || exit 99
box() { "\$@" --allow-uncapped -- sh -c '
	for f in /v/sub/pwn-\$(hostname) /usr/local/pwn-\$(hostname); do (echo pwn > \$f) 2>/dev/null && echo "wrote \$f"; done
	grep -E " /v/sub | /usr/local " /proc/self/mounts'; }
echo "== root ro";  box '$KERN' box ot3a --image host -v '$shared/v:/v:ro'
echo "== user ro";  box "\${as_user[@]}" XDG_RUNTIME_DIR='$shared/run' '$KERN' box ot3b --image host -v '$shared/v:/v:ro'
echo "== root rw";  '$KERN' box ot3c --image host -v '$shared/v:/v' -- grep " /v/sub " /proc/self/mounts
echo "== user rw";  "\${as_user[@]}" XDG_RUNTIME_DIR='$shared/run' '$KERN' box ot3d --allow-uncapped --image host -v '$shared/v:/v' -- grep " /v/sub " /proc/self/mounts
echo "== root bind-rootfs"; '$KERN' box ot3g --rootfs '$shared/r' --bind-rootfs -- grep " /sub " /proc/self/mounts
echo "== host"; ls -A '$shared/v/sub' /usr/local
EOF
}

@test "OT-3: :ro binds and --image host's system dirs are ro,nosuid,nodev below every submount, rw binds and --bind-rootfs nosuid,nodev; root-run and user-run" {
	shared_for_user
	mkdir -p "$shared/v/sub"
	chmod -R 755 "$shared/v"
	cp -a "$(mkrootfs)" "$shared/r"; mkdir "$shared/r/sub"
	run unshare -m --propagation private bash -c "as_user=(${as_user[*]}); $(ot3_script)"
	echo "$output"
	assert_status 0
	refute_line_re '^wrote '
	# Both submounts carry all three flags in every box, ro where asked.
	[ "$(grep -c '^tmpfs /v/sub tmpfs ro,nosuid,nodev' <<<"$output")" = 2 ]
	[ "$(grep -c '^tmpfs /usr/local tmpfs ro,nosuid,nodev' <<<"$output")" = 2 ]
	[ "$(grep -c '^tmpfs /v/sub tmpfs rw,nosuid,nodev' <<<"$output")" = 2 ]
	assert_line_re '^tmpfs /sub tmpfs rw,nosuid,nodev'
	# Nothing reached the host's directories.
	[ "$(sed -n '/^== host$/,$p' <<<"$output" | grep -c pwn)" = 0 ]
}

@test "OT-3: without the new mount API a bind with submounts is refused, naming it; one without still works" {
	require_root
	# PID 1's own binds: root's boxes without --map-host-root need idmapped
	# mounts, hence the new API, at all (box_rootmap.bats).
	src=$BATS_TEST_TMPDIR/v; mkdir -p "$src/sub"
	run --separate-stderr unshare -m --propagation private sh -c "
		mount -t tmpfs tmpfs '$src/sub' &&
		KERN_TEST_NO_MOUNT_API=1 '$KERN_T' box ot3e --map-host-root --image host -v '$src:/v:ro' -- touch /v/sub/pwn"
	assert_status 125
	[ "$stderr" = "kern: sandbox setup failed: making every submount read-only needs mount_setattr (Linux 5.12) for $src on /v: Function not implemented" ]
	run --separate-stderr env KERN_TEST_NO_MOUNT_API=1 "$KERN_T" box ot3f --map-host-root --image host -v "$src:/v:ro" -- sh -c \
		'grep " /v " /proc/self/mounts; touch /v/x'
	assert_status 1
	[[ $output == *" /v "*" ro,nosuid,nodev"* ]]
	[[ $stderr == *"Read-only file system"* ]]
}

@test "OT-6: --image host's /etc/ssl holds certs and openssl.cnf only; TLS verification still finds the CAs [rootless]" {
	run "$KERN" box ssl --image host -- sh -c 'ls -A /etc/ssl; ls /etc/ssl/private 2>&1; python3 -c "
import ssl
print(\"cas\", ssl.create_default_context().cert_store_stats()[\"x509_ca\"] > 0)"'
	assert_status 0
	[ "${lines[0]}" = certs ]
	[ "${lines[1]}" = openssl.cnf ]
	[[ ${lines[2]} == *"No such file or directory"* ]]
	[ "${lines[3]}" = "cas True" ]
}

@test "OT-9: a missing -v source below a symlink is refused before anything is created through it [rootless]" {
	d=$BATS_TEST_TMPDIR/ot9; mkdir -p "$d/user" "$d/target"
	ln -s "$d/target" "$d/user/a"
	run --separate-stderr "$KERN" box ot9 --image host -v "$d/user/a/b/c:/x" -- true
	assert_status 125
	# ELOOP's text is the C library's (glibc and musl differ).
	[[ $stderr == "kern: sandbox setup failed: create bind source $d/user/a/b/c: "*" (a component is a symlink; kern never follows one)" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ -z "$(ls -A "$d/target")" ]
	# Missing parents of a plain path are still made, 0700 and the caller's.
	run "$KERN" box ot9b --image host -v "$d/user/new/deeper:/x" -- true
	assert_status 0
	[ "$(stat -c '%a %u' "$d/user/new" "$d/user/new/deeper" | sort -u)" = "700 $(id -u)" ]
}

@test "OT-9: root creates nothing through a user's symlink to a root-only directory" {
	shared_for_user
	install -d -o kerntest -m 755 "$shared/home"
	install -d -m 700 "$shared/rootonly"
	runuser -u kerntest -- ln -s "$shared/rootonly" "$shared/home/a"
	run --separate-stderr "$KERN" box ot9r --image host -v "$shared/home/a/b:/x" -- true
	assert_status 125
	[[ $stderr == *"create bind source $shared/home/a/b: "*" (a component is a symlink; kern never follows one)" ]]
	[ -z "$(ls -A "$shared/rootonly")" ]
}

@test "OT-10: /dev/shm is noexec,nosuid,nodev in every box; under --ro and untrusted it and /dev/mqueue stay writable, nothing else in /dev [rootless]" {
	probe='grep -E " /dev/(shm|mqueue) " /proc/self/mounts | cut -d" " -f2,4
echo data > /dev/shm/f && echo shm-write
cp /bin/true /dev/shm/t && { /dev/shm/t 2>/dev/null && echo shm-exec || echo shm-noexec; }
touch /dev/mqueue/q && echo mq-write
touch /dev/x 2>/dev/null && echo dev-write || echo dev-ro'
	for flags in "" "--ro" "--security-profile untrusted"; do
		# shellcheck disable=SC2086
		run "$KERN" box ot10 -q --image host $flags -- sh -c "$probe"
		assert_status 0
		assert_line_re '^/dev/shm rw,nosuid,nodev,noexec'
		assert_line_re '^/dev/mqueue rw,nosuid,nodev,noexec'
		assert_line_re '^shm-write$'
		assert_line_re '^shm-noexec$'
		assert_line_re '^mq-write$'
		if [ -n "$flags" ]; then assert_line_re '^dev-ro$'; else assert_line_re '^dev-write$'; fi
	done
}
