#!/bin/sh
# For the next turn (written in the twenty-second session after its device time was spent).
# The launch path laid out in fewer lines (60a45f8: the nested call the unlikely branch; 9cd7429:
# the 11-argument driver launch entries as the nesting check alone) — `make bench-lines` on the
# dev VM: PyTorch's path (`marks`: __cudaLaunchKernel recorded, the driver's cuLaunchKernel
# passed through nested) 19.8 -> 17.7 code lines and 321 -> 296 instructions a launch, cuBLAS's
# (`drv`) 24.9 -> 20.7, the paused path 6.0 -> 6.0 (drv 7.0 -> 6.0); and (535e774) launch samples
# the stack budget is known to refuse stay on the launch path (callgrind: -0.5 code lines a
# launch).  On the H200 a line the program evicted costs more than its instructions; whether
# these show is for this script.
#   1: in place, the library's own time a recorded call (INGERO_SELF_TIME), 600 chunks a run,
#      the session-start library (2d06f56, .devbin/old/libingero_preload.so) and this one in
#      turn, three rounds (~220 s)
#   2, 3: the toggle of this build, PROCS processes a call (calls.sh 2|3 of this directory, with
#      PROCS=7 LIMIT=560 each), to read against section 23's pool (1.04, CI 0.93-1.15)
# The old library: `git worktree add /tmp/old 2d06f56 && make -C /tmp/old -s all`, then
# `mkdir -p .devbin/old && cp /tmp/old/build/libingero_preload.so .devbin/old/` (and
# `strip --strip-debug` it); the bundle's own library is this build's.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
1)	. tests/bench/inplace_lib.sh
	for r in 1 2 3; do
		INPLACE_CHUNKS=600 inplace old$r "$D/old/libingero_preload.so"
		INPLACE_CHUNKS=600 inplace new$r "$D/libingero_preload.so"
	done 2>&1 | tee "$OUT/inplace.txt" ;;
2|3) sh docs/gpu-runs/2026-12-03-twentysecond/calls.sh "$1" ;;
*) echo "usage: next.sh 1|2|3 (on the device, .devbin carried: docs/gpu.md)" >&2; exit 2 ;;
esac
