# A chroot where the kernel refuses CLONE_NEWUSER to everyone, root too
# (it refuses a process whose root is not its mount namespace's root), as
# kernels built without CONFIG_USER_NS do (issue 19). It holds the STATIC
# kern at /kern, a static busybox at /bin for its own shell, a busybox
# rootfs at /rootfs for boxes, and a fresh /proc; chroot_mount_cgroups adds
# /sys and the host's cgroup hierarchies for tests that need caps.
#
#   setup()    { chroot_make || return 1; }
#   teardown() { chroot_destroy; }
#   @test ... { chroot_run /kern box t --rootfs /rootfs -- /bin/true; }
#
# Root only: chroot(2), mount(2) and mknod(2) need it; chroot_make skips
# the test, saying why, otherwise. The chroot lives outside the bats
# temporary directories, which bats removes with rm -rf: chroot_destroy
# unmounts everything first and leaves the tree on disk (failing the test)
# if anything is still mounted in it, so a removal can never reach into a
# host file system through a mount.

# The binary under test: the static release build, as on a board.
# KERN_CHROOT_KERN names another one (an older build, to show a test
# fails without a change).
CHROOT_KERN=${KERN_CHROOT_KERN:-$TREE/build/kern-static}

# The host's chroot(8), found before its PATH is cleared.
CHROOT_BIN=$(command -v chroot || echo /usr/sbin/chroot)

# The busybox applets the chroot's own shell and the tests use.
CHROOT_APPLETS="sh true false cat echo id ls mkdir rm test unshare stat grep sleep kill touch"

# chroot_make: build the chroot, mount its /proc, set CHROOT.
chroot_make() {
	is_root || skip "needs root: chroot(2) and mount(2) (this run is as $(id -un))"
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		skip "needs a static /bin/busybox (apt-get install busybox-static)"
	if [ ! -x "$CHROOT_KERN" ]; then
		echo "$CHROOT_KERN is missing: the static build failed (see build/static-build.log, or run make static)"
		return 1
	fi
	CHROOT=$(mktemp -d /tmp/kern-chroot.XXXXXX) || return 1
	chmod 755 "$CHROOT"
	mkdir -p "$CHROOT"/bin "$CHROOT"/etc "$CHROOT"/proc "$CHROOT"/sys "$CHROOT"/dev \
		"$CHROOT"/tmp "$CHROOT"/root
	chmod 1777 "$CHROOT/tmp"
	cp "$CHROOT_KERN" "$CHROOT/kern"
	cp /bin/busybox "$CHROOT/bin/busybox"
	local a
	for a in $CHROOT_APPLETS; do ln -s busybox "$CHROOT/bin/$a"; done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' \
		>"$CHROOT/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$CHROOT/etc/group"
	# Device nodes of its own, never a bind of the host's /dev: removing
	# the tree must not be able to reach host device nodes.
	# The nodes a box's /dev binds (kern-fs), as a board's devtmpfs has them.
	mknod -m 666 "$CHROOT/dev/null" c 1 3 && mknod -m 666 "$CHROOT/dev/zero" c 1 5 &&
		mknod -m 666 "$CHROOT/dev/full" c 1 7 && mknod -m 444 "$CHROOT/dev/random" c 1 8 &&
		mknod -m 444 "$CHROOT/dev/urandom" c 1 9 || return 1
	mkrootfs "$CHROOT/rootfs" >/dev/null || return 1
	chroot_mount_proc
}

chroot_mount_proc() { mount -t proc -o nosuid,nodev,noexec proc "$CHROOT/proc"; }
chroot_umount_proc() { umount "$CHROOT/proc"; }

# chroot_mount_cgroups: a fresh sysfs at /sys and, on a tmpfs at
# /sys/fs/cgroup, every cgroup hierarchy the host mounts there (the same
# hierarchies: box cgroups made in the chroot are the host's).
chroot_mount_cgroups() {
	local c=$CHROOT/sys/fs/cgroup mp fstype opts o
	mount -t sysfs -o nosuid,nodev,noexec sysfs "$CHROOT/sys" || return 1
	mount -t tmpfs -o nosuid,nodev,noexec,mode=755 cgroups "$c" || return 1
	# mountinfo: ... MOUNT-POINT ... - FSTYPE SOURCE SUPER-OPTIONS
	while read -r mp fstype opts; do
		mkdir -p "$c/${mp#/sys/fs/cgroup/}" || return 1
		if [ "$fstype" = cgroup2 ]; then
			mount -t cgroup2 cgroup2 "$c/${mp#/sys/fs/cgroup/}" || return 1
		else
			o=${opts#rw,}
			case $o in name=*) o=none,$o ;; esac
			mount -t cgroup -o "$o" cgroup "$c/${mp#/sys/fs/cgroup/}" || return 1
		fi
	done < <(awk '$5 ~ "^/sys/fs/cgroup/[^/]+$" {
		for (i = 7; $i != "-"; i++) ; if ($(i+1) ~ /^cgroup2?$/) print $5, $(i+1), $(i+3) }' \
		/proc/self/mountinfo)
}

# chroot_run CMD [ARG...]: run CMD as root in the chroot, with an
# environment of its own (nothing of the test's XDG directories).
chroot_run() { env -i PATH=/bin HOME=/root "$CHROOT_BIN" "$CHROOT" "$@"; }

# chroot_run_as UID:GID CMD [ARG...]: the same as that user.
chroot_run_as() {
	local ids=$1
	shift
	env -i PATH=/bin HOME=/ "$CHROOT_BIN" --userspec="$ids" "$CHROOT" "$@"
}

# chroot_mounts: the mount points inside the chroot, deepest first.
chroot_mounts() {
	awk -v d="$CHROOT/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# chroot_procs: pids of processes whose root is the chroot (a box kern
# left behind).
# One find, not a readlink a process: on a busy machine (a full make
# check, some 300 processes) the loop of command substitutions took 2-5 s,
# and every test here asks twice.
chroot_procs() {
	find /proc/[0-9]*/root -maxdepth 0 -printf '%h\t%l\n' 2>/dev/null |
		awk -F '\t' -v r="$CHROOT" '$2 == r { sub("^/proc/", "", $1); print $1 }'
}

# chroot_destroy: kill what runs in it, unmount, remove. Fails the test,
# leaving the tree, when something stays mounted; fails it too when a
# process was still running there.
chroot_destroy() {
	[ -n "${CHROOT:-}" ] && [ -d "$CHROOT" ] || return 0
	local left m rc=0
	left=$(chroot_procs)
	if [ -n "$left" ]; then
		echo "processes left in $CHROOT: $left"
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null
		rc=1
	fi
	for m in $(chroot_mounts); do umount "$m" || umount -l "$m"; done
	if [ -n "$(chroot_mounts)" ]; then
		echo "still mounted in $CHROOT (left on disk):"; chroot_mounts
		return 1
	fi
	rm -rf --one-file-system "$CHROOT"
	CHROOT=
	return $rc
}
