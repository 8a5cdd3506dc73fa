#!/bin/sh
# preload_capture.sh — INGERO_CAPTURE=cudaProfilerApi: only the calls between
# cudaProfilerStart and cudaProfilerStop are recorded, each exactly once, over
# two capture windows; the paused calls are neither sent nor counted as made
# or dropped.  Without the setting the profiler calls change nothing.
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_KERNEL_US=1

start_sink "$T/cap.sink" -i 1000
INGERO_CAPTURE=cudaProfilerApi traced "$B/tests/preload_calls" capture 9 >"$T/cap.truth"
check_eq "workload runs with INGERO_CAPTURE=cudaProfilerApi" 0 $?
wait_sink
p=$(sed -n '1s/^truth pid=\([0-9]*\) .*/\1/p' "$T/cap.truth")
check "calls inside both capture windows counted exactly" compare_truth "$T/cap.truth" "$T/cap.sink" capture
check_eq "paused syncs not recorded" 0 "$(sink_calls "$T/cap.sink" "$p" cudaDeviceSynchronize)"
check_eq "the allocation before the first start not recorded" 0 "$(sink_calls "$T/cap.sink" "$p" cudaMalloc)"
check_eq "COUNTS: made = calls received (27)" 27 "$(sink_field "$T/cap.sink" counts "$p" made)"
check_eq "nothing dropped" 0 "$(sink_field "$T/cap.sink" counts "$p" dropped)"

start_sink "$T/all.sink" -i 1000
traced "$B/tests/preload_calls" capture 9 >"$T/all.truth"
check_eq "workload runs without the setting" 0 $?
wait_sink
p=$(sed -n '1s/^truth pid=\([0-9]*\) .*/\1/p' "$T/all.truth")
check "without INGERO_CAPTURE every call counted, profiler calls or not" compare_truth "$T/all.truth" "$T/all.sink" all
check_eq "syncs around the windows recorded (18)" 18 "$(sink_calls "$T/all.sink" "$p" cudaDeviceSynchronize)"

start_sink "$T/bad.sink" -i 1000
INGERO_CAPTURE=bogus traced "$B/tests/preload_calls" capture 3 >"$T/bad.truth"
wait_sink
p=$(sed -n '1s/^truth pid=\([0-9]*\) .*/\1/p' "$T/bad.truth")
check_eq "an unknown INGERO_CAPTURE records everything" 6 "$(sink_calls "$T/bad.sink" "$p" cudaDeviceSynchronize)"
finish
