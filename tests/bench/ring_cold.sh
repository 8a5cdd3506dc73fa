#!/bin/sh
# ring_cold.sh — `make bench-ring`: what the shared ring's size costs a
# program whose own work evicts the library's cache lines between CUDA calls
# (docs/benchmarks.md, "Cold caches").  Kernel launches on the fake runtime
# (each spinning FAKECUDA_LAUNCH_NS on the host, as a real launch takes
# microseconds), PRELOAD_CALLS_THRASH_KB of memory touched between calls, no
# stacks; each run measures untraced, then traced with an 8 MiB ring (the
# default) and a 2 MiB one (INGERO_RING_EVENTS=16384), interleaved.  Prints key=value:
#   ring_cold_8mib_ns, ring_cold_2mib_ns   added per call (median over runs)
#   ring_cold_gain_ns                      median of the per-run differences
# Runs from a build tree, or from a bundle (fake_launch_lib.sh).
set -u
B=${B:-build}
RUNS=${RUNS:-9}
N=${N:-50000}
SO=${SO:-$PWD/$B/libingero_preload.so}
export FAKECUDA_LAUNCH_NS=${FAKECUDA_LAUNCH_NS:-2000} FAKECUDA_KERNEL_US=1 \
	PRELOAD_CALLS_LAUNCH=1 PRELOAD_CALLS_THRASH_KB=${KB:-256} INGERO_STACKS=none INGERO_LAUNCH_SAMPLE=0
. tests/bench/fake_launch_lib.sh
cpu() { env "$@" "$CALLS" loop "$N" $((N / 5)) 20 | sed -n 's/.*cpu_ns_per_call=\([0-9.]*\).*/\1/p'; }
for r in $(seq "$RUNS"); do
	echo "$(cpu X=1) $(cpu INGERO_RING_EVENTS=65536 LD_PRELOAD="$SO") $(cpu INGERO_RING_EVENTS=16384 LD_PRELOAD="$SO")"
done >"$T/runs"
echo "# $(uname -n), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs of $N launches, ${PRELOAD_CALLS_THRASH_KB} KiB touched between calls"
echo "ring_cold_8mib_ns=$(awk '{ print $2 - $1 }' "$T/runs" | med)"
echo "ring_cold_2mib_ns=$(awk '{ print $3 - $1 }' "$T/runs" | med)"
echo "ring_cold_gain_ns=$(awk '{ print $2 - $3 }' "$T/runs" | med)"
