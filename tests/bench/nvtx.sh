#!/bin/sh
# nvtx.sh — `make bench-nvtx`: what libingero_preload.so adds to an NVTX
# range as NVTX's tool (preload/nvtx_hooks.c), on a program carrying NVTX's
# loader (tests/helpers/nvtx_ranges.c bench): one push and pop of a short
# name, as torch.cuda.nvtx.range makes.  key=value lines:
#
#   nvtx_base_ns   a push and pop with no tool (NVTX's own no-op path; CPU time of the calling thread)
#   nvtx_pair_ns   added by the library as the tool: the name copied, two clock reads, a ring put
#
# Each figure is the median over RUNS runs (interleaved) of N pairs after W
# warm-up pairs; the test sink drains the ring as a collector would.
set -u
B=${B:-build}
RUNS=${RUNS:-5}
N=${N:-200000}
W=${W:-20000}
. tests/bench/sink.sh   # $T and the sink on $INGERO_ENDPOINT

cpu() { sed -n 's/.*cpu_ns_per_pair=\([0-9.]*\).*/\1/p'; }
PRE=$(cd "$B" && pwd)/libingero_preload.so
: >"$T/base"; : >"$T/tool"
r=0
while [ $r -lt "$RUNS" ]; do
	env -u NVTX_INJECTION64_PATH "$B/tests/nvtx_ranges" bench "$N" "$W" | cpu >>"$T/base"
	env LD_PRELOAD="$PRE" NVTX_INJECTION64_PATH="$PRE" "$B/tests/nvtx_ranges" bench "$N" "$W" | cpu >>"$T/tool"
	r=$((r + 1))
done
base=$(median "$T/base")
echo "# $(date -u +%Y-%m-%d) $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); median of $RUNS runs of $N pairs"
echo "nvtx_base_ns=$base"
echo "nvtx_pair_ns=$(awk -v a="$(median "$T/tool")" -v b="$base" 'BEGIN { printf "%.1f", a - b }')"
