#!/bin/sh
# Run a CI step with the host's toolchain in a box: the source read-only,
# a private build directory, a size-capped /tmp, no network, a deadline.
# Usage: ci-step.sh SRC_DIR [COMMAND...]   (default: make -C /src check)
set -eu
src=$(cd "${1:?usage: ci-step.sh SRC_DIR [COMMAND...]}" && pwd)
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ $# -gt 0 ] || set -- make --no-print-directory -C /src check
kern box "ci-$$" --image host --ro \
	-v "$src:/src:ro" -v "$out:/out" --tmpfs /tmp:256m -w /out \
	--timeout 600 -- "$@"
