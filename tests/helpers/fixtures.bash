# Image fixtures for the pull tests, sourced by tests/bats/pull*.bats.
#
# fixture_images: build (once per machine) the busybox image and, as root,
#   the Python image (debootstrap --variant=minbase --include=python3) as
#   OCI layouts under $KERN_FIXTURE_CACHE (default /var/tmp/kern-fixtures).
# registry_start DIR: Debian's docker-registry with its OWN config, bound to
#   127.0.0.1 on a free port (Debian's default config listens on all
#   interfaces; it is never used). Sets REG_PORT, REG_PID, REG_LOG.
# registry_push LAYOUT REF FORMAT: skopeo copy into it (oci or v2s2).
# hostile_start DIR: tests/helpers/hostile-registry.py on a free port.

FIXTURE_CACHE=${KERN_FIXTURE_CACHE:-/var/tmp/kern-fixtures}
HELPERS=${TREE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/helpers

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# A world-readable fixture cache when root built it; an unprivileged run
# that finds none builds its own copy of what it can.
fixture_dir() {
	if [ -r "$FIXTURE_CACHE/busybox/index.json" ]; then
		echo "$FIXTURE_CACHE"
	elif mkdir -p "$FIXTURE_CACHE" 2>/dev/null && [ -w "$FIXTURE_CACHE" ]; then
		echo "$FIXTURE_CACHE"
	else
		mkdir -p "${BATS_FILE_TMPDIR:-/tmp}/fixtures" && echo "${BATS_FILE_TMPDIR:-/tmp}/fixtures"
	fi
}

fixture_busybox() {
	local d; d=$(fixture_dir)
	if [ ! -r "$d/busybox/index.json" ] || [ ! -r "$d/busybox-multi/index.json" ] ||
		[ ! -r "$d/busybox-user/index.json" ]; then
		[ -x /bin/busybox ] || return 1
		( umask 022; python3 "$HELPERS/mkimage.py" busybox "$d/busybox" ) >&2 || return 1
	fi
	echo "$d"
}

# The Python image costs a debootstrap run (network to the Debian mirror,
# root): built once per machine, then reused.
fixture_python() {
	local d; d=$(fixture_dir)
	if [ ! -r "$d/python/index.json" ]; then
		[ "$(id -u)" = 0 ] || return 1
		command -v debootstrap >/dev/null || return 1
		local root="$d/python-rootfs.tmp"
		rm -rf "$root"
		( umask 022
		  debootstrap --variant=minbase --include=python3 bookworm "$root" \
			http://deb.debian.org/debian >"$d/debootstrap.log" 2>&1 &&
		  rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/* &&
		  python3 "$HELPERS/mkimage.py" rootfs "$d/python" "$root" ) >&2 || { rm -rf "$root"; return 1; }
		rm -rf "$root"
	fi
	echo "$d"
}

registry_start() {
	local dir=$1
	REG_PORT=$(free_port)
	mkdir -p "$dir/storage"
	cat >"$dir/config.yml" <<-CFG
	version: 0.1
	log:
	  level: info
	  accesslog:
	    disabled: false
	storage:
	  filesystem:
	    rootdirectory: $dir/storage
	  delete:
	    enabled: true
	http:
	  addr: 127.0.0.1:$REG_PORT
	CFG
	REG_LOG=$dir/registry.log
	docker-registry serve "$dir/config.yml" >"$REG_LOG" 2>&1 </dev/null 3>&- &
	REG_PID=$!
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$REG_PORT/v2/" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "docker-registry did not start:" >&2
	cat "$REG_LOG" >&2
	return 1
}

registry_stop() {
	if [ -n "${REG_PID:-}" ]; then
		kill "$REG_PID" 2>/dev/null || true
		wait "$REG_PID" 2>/dev/null || true
	fi
	REG_PID=
	return 0
}

# registry_push LAYOUT[:TAG] NAME:TAG oci|v2s2 [--all]
registry_push() {
	local src=$1 dst=$2 fmt=$3; shift 3
	skopeo --insecure-policy copy -q "$@" --format "$fmt" --dest-tls-verify=false \
		"oci:$src" "docker://127.0.0.1:$REG_PORT/$dst" >&2
}

# How many times the registry served GET of a blob (its access log).
registry_blob_gets() {
	grep -c "\"GET /v2/[^ ]*/blobs/$1 " "$REG_LOG" || true
}

# hostile_start DIR [MODE]
hostile_start() {
	local dir=$1
	HOSTILE_PORT=$(free_port)
	HOSTILE_LOG=$dir/hostile.log
	python3 "$HELPERS/hostile-registry.py" "$HOSTILE_PORT" "$dir" "${2:-plain}" >"$HOSTILE_LOG" 2>&1 </dev/null 3>&- &
	HOSTILE_PID=$!
	local scheme=http
	[ "${2:-}" = tls ] && scheme=https
	for _ in $(seq 100); do
		[ "$(curl -sk -o /dev/null -w '%{http_code}' "$scheme://127.0.0.1:$HOSTILE_PORT/v2/")" != 000 ] && return 0
		sleep 0.1
	done
	cat "$HOSTILE_LOG" >&2
	return 1
}

hostile_stop() {
	if [ -n "${HOSTILE_PID:-}" ]; then
		kill "$HOSTILE_PID" 2>/dev/null || true
		wait "$HOSTILE_PID" 2>/dev/null || true
	fi
	HOSTILE_PID=
	return 0
}

# Until the layer extractor (lib/layer/unpack.h) is linked in, kern fails every
# layer closed; tests that need a rootfs skip with that reason.
probe_extractor() {
	local out cache
	cache=$(mktemp -d) || return 1
	out=$(XDG_CACHE_HOME=$cache kern pull "127.0.0.1:$REG_PORT/$1" 2>&1) || true
	rm -rf "$cache"
	case $out in
	*"layer extraction is not built into this kern"*) echo no ;;
	*) echo yes ;;
	esac
}

require_extractor() {
	[ "${HAVE_EXTRACTOR:-yes}" = yes ] || skip "layer extraction (lib/layer/unpack.h, the unpack branch) is not in this build"
}

# tls_material DIR: a throw-away CA and a certificate for registry.test
# signed by it (DIR/ca.pem, DIR/cert.pem, DIR/key.pem).
tls_material() {
	local d=$1
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=kern-test-ca \
		-keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null &&
	openssl req -newkey rsa:2048 -nodes -subj /CN=registry.test -keyout "$d/key.pem" \
		-out "$d/req.pem" 2>/dev/null &&
	printf 'subjectAltName=DNS:registry.test\n' >"$d/ext" &&
	openssl x509 -req -in "$d/req.pem" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
		-days 2 -extfile "$d/ext" -out "$d/cert.pem" 2>/dev/null
}

# The cache key of a reference (box-cli.md §10, image cache layout), computed
# here independently of kern's C implementation: key_of REF
key_of() {
	python3 - "$1" <<-'PY'
	import re, sys
	r = sys.argv[1]
	c = r.rfind(":")
	if c < 0 or "/" in r[c:]:
	    r += ":latest"
	h = 0xcbf29ce484222325
	for b in r.encode():
	    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
	print(re.sub(r"[^A-Za-z0-9_-]", "_", r) + "-%016x" % h)
	PY
}
