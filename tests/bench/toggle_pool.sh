#!/bin/sh
# toggle_pool.sh — the toggle's figures (turns_lib.sh, turns_toggle) pooled
# over several runs: every toggle.VARIANT.PROC.out chunk file under the
# directories given (a run's OUT, or an unpacked
# docs/gpu-runs/*/raw.tar.xz, call*-chunks.d/) is one process.  A run of the H200 loop
# buys ~10 chunk pairs a device second, and one variant's figure needs
# thousands for a CI of ±0.3 points (docs/benchmarks.md).  Prints
# turns_toggle's toggle_variant= lines (procs, chunks, the chunk figure and
# its CI) and toggle_vs_aa= for each traced variant; with SPLIT=1 (the runs'
# collectors ran with INGERO_SPLIT_BPF) each traced variant's held chunks as
# VARIANT-held, and toggle_split= (the variant less its held chunks: the held
# eBPF part's share of recording).
#   [SPLIT=1] sh tests/bench/toggle_pool.sh DIR...
set -u
. tests/bench/turns_lib.sh
log() { echo "$*"; }
T=$(mktemp "${TMPDIR:-/tmp}/ingero-pool.XXXXXX")
trap 'rm -f "$T"' EXIT
vs=""
d=0
for dir in "$@"; do
	d=$((d + 1))
	for f in "$dir"/toggle.*.*.out; do
		[ -f "$f" ] || continue
		b=${f##*/}; b=${b#toggle.}; b=${b%.out}
		v=${b%.*}; p=${b##*.}
		toggle_rows "$v" "$d.$p" "$f" $([ "${SPLIT:-}" = 1 ] && echo split) >>"$T"
		case " $vs " in *" $v "*) ;; *) vs="$vs $v" ;; esac
	done
done
[ -s "$T" ] || { echo "toggle_pool: no toggle.VARIANT.PROC.out chunk files under: $*" >&2; exit 2; }
# the A/A first, as turns_toggle orders them
case " $vs " in *" untraced "*) vs="untraced $(echo "$vs" | tr ' ' '\n' | grep -vx untraced | tr '\n' ' ')" ;; esac
toggle_summary "$T" "$vs"
