#!/bin/sh
# preload_lanes.sh — threads' own lanes (preload/lane.h): every call arrives
# once, whether through a lane or the shared ring; a gone thread's lane is
# freed for the next ones; a call in a lane never loses the stack another
# thread defined in the ring just before it; a burst that fills a lane goes
# on through the ring; INGERO_LANES=0 is the ring alone.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_NOOP=1

# lanes_field ERR FIELD: from the exit's "lanes: N claimed, M freed, K calls taken from lanes"
# ("missing" without that line: a check on it then fails)
lanes_field() {
	v=$(sed -n "s/.*lanes: \([0-9]*\) claimed, \([0-9]*\) freed, \([0-9]*\) calls taken.*/\\$2/p" "$1" | tail -n 1)
	echo "${v:-missing}"
}

# --- waves of threads, each launch with a stack (one call site: one stack, defined once) --
start_sink "$T/waves.sink" -v -n 1
INGERO_DEBUG=1 INGERO_STACKS=launch,sync INGERO_STACK_BUDGET_PPM=1000000 INGERO_LANES=48 \
	traced "$B/tests/preload_calls" waves 40 400 >"$T/waves.truth" 2>"$T/waves.err"
check_eq "waves: program exits 0" 0 $?
wait_sink
check "waves: every call of every API arrived once" compare_truth "$T/waves.truth" "$T/waves.sink" waves
pid=$(sed -n 's/^truth pid=\([0-9]*\) .*/\1/p' "$T/waves.truth" | head -n 1)
check_eq "waves: nothing dropped" 0 "$(sink_field "$T/waves.sink" counts "$pid" dropped)"
claimed=$(lanes_field "$T/waves.err" 1)
freed=$(lanes_field "$T/waves.err" 2)
taken=$(lanes_field "$T/waves.err" 3)
echo "# 3 waves of 40 threads, 48 lanes: $claimed claimed, $freed freed, $taken calls from lanes"
check_eq "waves: each of the 120 threads had a lane (the gone ones' freed for the next wave)" 120 "$claimed"
check_ge "waves: the first two waves' lanes were freed" "$freed" 80
check_eq "waves: all 54,000 calls came through lanes" 54000 "$taken"
# a short entry carries no tid: the lane's owner gives it (pids are handed out
# cyclically, so the 120 threads have 120 tids)
tids=$(grep '^CALL cudaLaunchKernel ' "$T/waves.sink" | sed 's/.* tid=\([0-9]*\) .*/\1/' | sort -u | wc -l)
check_eq "waves: the launches name their 120 threads" 120 "$tids"
for api in cudaLaunchKernel cudaStreamSynchronize; do
	got=$(grep "^calls pid=$pid api=$api " "$T/waves.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')
	want=$(sink_calls "$T/waves.sink" "$pid" "$api")
	check_eq "waves: every $api keeps its stack (defined by whichever thread came first)" "$want" "${got:-0}"
done

# --- more threads than lanes: the rest share the ring ----------------------------------
start_sink "$T/many.sink" -n 1
INGERO_DEBUG=1 INGERO_LANES=8 traced "$B/tests/preload_calls" threads 32 5000 >"$T/many.truth" 2>"$T/many.err"
wait_sink
pid=$(sed -n 's/^truth pid=\([0-9]*\) .*/\1/p' "$T/many.truth" | head -n 1)
got=$(sink_calls "$T/many.sink" "$pid" cudaLaunchKernel)
drop=$(sink_field "$T/many.sink" counts "$pid" dropped)
echo "# 32 threads x 5000, 8 lanes: $got received, $drop dropped"
check_eq "32 threads, 8 lanes: received + dropped = made" 160000 $((got + drop))
check_eq "32 threads, 8 lanes: 8 claimed" 8 "$(lanes_field "$T/many.err" 1)"
taken=$(lanes_field "$T/many.err" 3)
check "32 threads, 8 lanes: at most 8 threads' calls (40,000) through lanes" test "$taken" -le 40000 -a "$taken" -gt 0

# --- one thread's burst outruns the sender's start: its lane fills, the ring takes the rest --
start_sink "$T/burst.sink" -n 1
INGERO_DEBUG=1 traced "$B/tests/preload_calls" threads 1 300000 >"$T/burst.truth" 2>"$T/burst.err"
wait_sink
pid=$(sed -n 's/^truth pid=\([0-9]*\) .*/\1/p' "$T/burst.truth" | head -n 1)
got=$(sink_calls "$T/burst.sink" "$pid" cudaLaunchKernel)
drop=$(sink_field "$T/burst.sink" counts "$pid" dropped)
taken=$(lanes_field "$T/burst.err" 3)
echo "# 300k launches from one thread at once: $taken from its lane, $got received, $drop dropped"
check_eq "burst: received + dropped = made" 300000 $((got + drop))
check "burst: the lane filled, the ring took more" test "$taken" -ge 2000 -a "$got" -gt "$taken"

# --- a steady thread: its lane is drained and filled again ------------------------------
start_sink "$T/steady.sink" -n 1
FAKECUDA_NOOP= FAKECUDA_LAUNCH_NS=3000 FAKECUDA_KERNEL_US=0 INGERO_DEBUG=1 \
	traced "$B/tests/preload_calls" threads 1 100000 >"$T/steady.truth" 2>"$T/steady.err"
wait_sink
check "steady: every call arrived once" compare_truth "$T/steady.truth" "$T/steady.sink" steady
taken=$(lanes_field "$T/steady.err" 3)
echo "# 100k launches of 3 us from one thread: $taken from its lane"
# (the first few thousand go to the ring while the sender starts: it faults
# the 8 MiB ring in before it drains, longer than 2,048 calls of 3 us)
check "steady: half or more through its lane (24 laps of it or more)" test "$taken" -ge 50000

# --- INGERO_LANES=0: the ring alone ---------------------------------------------------
start_sink "$T/none.sink" -n 1
INGERO_DEBUG=1 INGERO_LANES=0 traced "$B/tests/preload_calls" all 20 >"$T/none.truth" 2>"$T/none.err"
wait_sink
check "no lanes: every call of every API arrived once" compare_truth "$T/none.truth" "$T/none.sink" none
check_eq "no lanes: none claimed" 0 "$(lanes_field "$T/none.err" 1)"
check_eq "no lanes: no call from a lane" 0 "$(lanes_field "$T/none.err" 3)"
finish
