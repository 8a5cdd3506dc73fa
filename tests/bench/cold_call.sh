#!/bin/sh
# cold_call.sh — `make bench-cold`: what the library adds to a kernel launch
# when the program's own work between launches has evicted the library's
# lines, as PyTorch's ~46 us of Python and C++ between launches do on the
# H200.  Between launches the program
#   data   touches 256 KiB (KB): the library's data leaves L1d
#   code   also runs 1 MiB of code (CODE_KB; a jump per line, 256 pages):
#          its code leaves L1i and its pages the iTLB
#   deep   runs 1 MiB of code and touches 4 MiB (DEEP_KB): a 2 MiB L2 loses
#          all of it too, the lines come from L3
# Launches on the fake runtime (each spinning FAKECUDA_LAUNCH_NS on the host),
# no stacks, no GPU marks (MARKS=1: with them); the test sink drains the ring.
# LAUNCH=driver: through the driver's cuLaunchKernel as cuGetProcAddress hands
# it out, PyTorch's path (the default, cudaLaunchKernel, records in the
# runtime's wrapper and passes through the driver's).  The figure is the
# wall time inside the launch calls (preload_calls' in_call_ns: the program's
# own work, whose time varies far more than the library's, is left out).
# Each run measures, interleaved: untraced, then traced by SO (and by SO_B,
# another build of the library, if set: two builds side by side in one run).
# Prints key=value, the median over RUNS of the time added per launch:
#   cold_hot_ns cold_data_ns cold_code_ns cold_deep_ns            SO
#   ..._b                                                         SO_B, if set
#   cold_code_gain_ns cold_deep_gain_ns   median of the runs' SO - SO_B
# Runs from a build tree, or from a bundle (fake_launch_lib.sh).
set -u
B=${B:-build}
RUNS=${RUNS:-9}
N=${N:-20000}
SO=${SO:-$PWD/$B/libingero_preload.so}
SO_B=${SO_B:-}
export FAKECUDA_LAUNCH_NS=${FAKECUDA_LAUNCH_NS:-2000} FAKECUDA_KERNEL_US=1 \
	PRELOAD_CALLS_LAUNCH=${LAUNCH:-1} INGERO_STACKS=none INGERO_LAUNCH_SAMPLE=0 INGERO_GPU_MARKS=${MARKS:-0}
. tests/bench/fake_launch_lib.sh
in_call() { # N, then the environment
	_n=$1; shift
	env "$@" "$CALLS" loop "$_n" $((_n / 5)) 20 | sed -n 's/.*in_call_ns=\([0-9.]*\).*/\1/p'
}
# one run of a condition: "base so so_b"
run() {
	echo "$(in_call "$@") $(in_call "$@" LD_PRELOAD="$SO") $([ -n "$SO_B" ] && in_call "$@" LD_PRELOAD="$SO_B" || echo 0)"
}
CODE="PRELOAD_CALLS_CODE_KB=${CODE_KB:-1024}"
for r in $(seq "$RUNS"); do
	run "$N" X=1 >>"$T/hot"
	run "$N" PRELOAD_CALLS_THRASH_KB=${KB:-256} >>"$T/data"
	run "$N" PRELOAD_CALLS_THRASH_KB=${KB:-256} $CODE >>"$T/code"
	run $((N / 4)) PRELOAD_CALLS_THRASH_KB=${DEEP_KB:-4096} $CODE >>"$T/deep"
done
echo "# $(uname -n), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs of $N launches ($((N / 4)) deep), PRELOAD_CALLS_LAUNCH=$PRELOAD_CALLS_LAUNCH, GPU marks $INGERO_GPU_MARKS"
for c in hot data code deep; do
	echo "cold_${c}_ns=$(awk '{ print $2 - $1 }' "$T/$c" | med)"
done
if [ -n "$SO_B" ]; then
	for c in hot data code deep; do
		echo "cold_${c}_ns_b=$(awk '{ print $3 - $1 }' "$T/$c" | med)"
	done
	echo "cold_code_gain_ns=$(awk '{ print $2 - $3 }' "$T/code" | med)"
	echo "cold_deep_gain_ns=$(awk '{ print $2 - $3 }' "$T/deep" | med)"
fi
