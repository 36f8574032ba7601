#!/bin/sh
# Print the applet chain kern box would run, then run that chain by hand:
# the same box, one step per process image.
set -eu
plan=$(kern box chained --image host --ro --plan -- sh -c 'echo "hello from $(hostname)"; exit 3')
printf '%s\n' "$plan"
rc=0
sh -c "$plan" || rc=$?
echo "the chain exited $rc"
