#!/bin/sh
# A resident box reused with kern exec, the way agent pools keep one warm:
# start it detached, run commands in it, list it, stop it.
set -eu
name=resident-$$
kern box "$name" --image host -d --init --label purpose=example -- sleep 300
trap 'kern stop "$name" >/dev/null 2>&1 || true' EXIT
kern exec "$name" -- sh -c 'echo "inside $(hostname), pid $$"'
kern exec "$name" -e GREETING=hi -- sh -c 'echo "$GREETING from exec"'
kern ps --filter "name=$name" --json
