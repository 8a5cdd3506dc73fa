#!/bin/sh
# nccl.sh — `make bench-nccl`: what libingero_preload.so adds to an NCCL
# call (preload/nccl_hooks.c), on the fake libnccl.so.2: ncclAllReduce on a
# one-rank communicator (tests/helpers/nccl_calls.c).  key=value lines:
#
#   nccl_base_ns          the fake call alone (CPU time of the calling thread per call)
#   nccl_preload_ns       added by the library with GPU marks off (INGERO_GPU_MARKS=0):
#                         the interposition itself — two clock reads, the
#                         communicator's slot, its sequence number, a ring put
#   nccl_preload_marks_ns added with GPU marks on (the default): also a mark on
#                         the collective's stream before and after the real
#                         call, two driver calls each (cuStreamIsCapturing,
#                         cuEventRecord) — the fake driver's here; a real
#                         driver's cost more (docs/benchmarks.md)
#
# Each figure is the median over RUNS runs (interleaved) of N calls after W
# warm-up calls; the collector side is the test sink, so the ring is drained.
set -u
B=${B:-build}
RUNS=${RUNS:-5}
N=${N:-100000}
W=${W:-20000}
. tests/bench/sink.sh   # $T and the sink on $INGERO_ENDPOINT

cpu() { sed -n 's/.*cpu_ns_per_call=\([0-9.]*\).*/\1/p'; }
PRE=$(cd "$B" && pwd)/libingero_preload.so
: >"$T/base"; : >"$T/nomarks"; : >"$T/marks"
r=0
while [ $r -lt "$RUNS" ]; do
	"$B/tests/nccl_calls" "$N" "$W" | cpu >>"$T/base"
	env LD_PRELOAD="$PRE" INGERO_GPU_MARKS=0 "$B/tests/nccl_calls" "$N" "$W" | cpu >>"$T/nomarks"
	env LD_PRELOAD="$PRE" "$B/tests/nccl_calls" "$N" "$W" | cpu >>"$T/marks"
	r=$((r + 1))
done
base=$(median "$T/base")
echo "# $(date -u +%Y-%m-%d) $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); median of $RUNS runs of $N calls"
echo "nccl_base_ns=$base"
echo "nccl_preload_ns=$(awk -v a="$(median "$T/nomarks")" -v b="$base" 'BEGIN { printf "%.1f", a - b }')"
echo "nccl_preload_marks_ns=$(awk -v a="$(median "$T/marks")" -v b="$base" 'BEGIN { printf "%.1f", a - b }')"
