#!/bin/sh
# The README's first example: Python from the host, in a box, offline.
set -eu
kern box hello --image host -- python3 -c 'print(6*7)'
