#!/bin/sh
# toggle_history.sh — the toggle's figure over every process of the current
# per-call path that the device sessions kept (docs/gpu-runs/toggle-current.txt:
# raw tarballs and their chunk folders), through toggle_pool.sh.  The
# process CI narrows as sessions add processes of one build: ~16 processes
# read ±0.12 points, so a figure ~0.1 under the budget needs ~35.
# Folders after the list (a device call's fresh chunk files, not yet kept)
# join the pool.
#   sh tests/bench/toggle_history.sh [LIST [DIR...]]
set -u
list=${1:-docs/gpu-runs/toggle-current.txt}
[ $# -gt 0 ] && shift
[ -f "$list" ] || { echo "toggle_history: no list $list" >&2; exit 2; }
for d in "$@"; do   # (the fresh folders stay in "$@"; the list's are added after them)
	[ -d "$d" ] || { echo "toggle_history: no folder $d" >&2; exit 2; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-history.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0
while read -r tar dirs; do
	case $tar in ''|'#'*) continue ;; esac
	n=$((n + 1))
	mkdir -p "$T/$n"
	tar xJf "docs/gpu-runs/$tar" -C "$T/$n" ||
		{ echo "toggle_history: cannot unpack docs/gpu-runs/$tar" >&2; exit 2; }
	for d in $dirs; do
		[ -d "$T/$n/$d" ] || { echo "toggle_history: no folder $d in docs/gpu-runs/$tar" >&2; exit 2; }
		set -- "$@" "$T/$n/$d"
	done
done <"$list"
[ $# -gt 0 ] || { echo "toggle_history: $list names no chunk folders" >&2; exit 2; }
sh tests/bench/toggle_pool.sh "$@"
