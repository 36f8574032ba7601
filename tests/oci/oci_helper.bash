# Shared by tests/oci/*.bats (sourced after tests/bats/helper).

# refused_fields CONFIG ROOTFS: kern oci create on CONFIG (root.path set
# to ROOTFS), and again with each refused field taken out, until create
# succeeds; prints the refused fields, one a line, in the order create
# meets them.
refused_fields() {
	local cfg=$1 rootfs=$2 b=$BATS_TEST_TMPDIR/rf del=. i out f
	mkdir -p "$b"
	for i in $(seq 1 20); do
		jq --arg r "$rootfs" ".root.path = \$r | .process.terminal = false | $del" "$cfg" >"$b/config.json"
		if "$KERN" oci --root "$OCIROOT" create -b "$b" "rf$i" </dev/null >"$b/out" 2>&1 3>&-; then
			"$KERN" oci --root "$OCIROOT" delete -f "rf$i"
			return 0
		fi
		out=$(cat "$b/out")
		f=$(grep -o 'mounts\[[0-9]*\]\|linux\.[a-zA-Z]*Paths\[[0-9]*\]\|linux\.namespaces\[[0-9]*\]\.path\|linux\.[a-zA-Z][a-zA-Z.]*[a-zA-Z]\|process\.[a-zA-Z.]*[a-zA-Z]' <<<"$out" | head -1)
		[ -n "$f" ] || { echo "unparsed: $out" >&2; return 1; }
		case $f in
		mounts*) echo "$f $(jq -r ".${f}.type + \" \" + .${f}.destination + \" \" + (.${f}.options // [] | join(\",\"))" "$b/config.json")" ;;
		linux.*Paths*) echo "$f $(jq -r ".${f}" "$b/config.json")" ;;
		*) echo "$f" ;;
		esac
		del="$del | del(.$f)"
	done
	return 1
}

# capture_runtime FILE: a runtime that keeps the bundle's config.json in
# FILE, then is runc; prints its path.
capture_runtime() {
	local rt=$BATS_TEST_TMPDIR/capture-runtime
	cat >"$rt" <<-EOF
	#!/bin/sh
	prev=
	for a in "\$@"; do
		case \$prev in --bundle|-b) cp "\$a/config.json" "$1" ;; esac
		prev=\$a
	done
	exec runc "\$@"
	EOF
	chmod +x "$rt"
	echo "$rt"
}
