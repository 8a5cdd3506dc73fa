#!/bin/sh
# tests/bench/loaded.sh — `make bench-overhead`'s last part: the tracer on a
# machine with no idle CPU, its threads under SCHED_BATCH (the default) and
# under the default policy (INGERO_TRACER_BATCH=0).  Every CPU but the
# first runs two busy loops for the whole part, so the tracer's threads
# (the library's sender and GPU watcher, the collector's) can only run where
# the loop runs or where the busy loops do; the launch-bound loop
# (launch_loop.py, STEPS_LOADED steps) runs untraced, traced, and traced
# without SCHED_BATCH, in that order, LOADED_PAIRS times.  Whole runs (start-up
# included): medians of the wall times.  Prints key=value lines:
#   loaded_untraced_wall_s, loaded_batch_pct, loaded_nobatch_pct (traced
#   wall over untraced, %), loaded_batch_faster_pairs (pairs where the
#   SCHED_BATCH run took less wall than the other, of loaded_pairs).
#   sh tests/bench/loaded.sh LIBCUDART      (root; the collector is $INGERO_COLLECTOR)
# LOADED_CMD replaces the loop (any command printing wall_s=…: on the GPU
# machine examples/train_overhead.py; LIBCUDART is then unused).
set -u
LIB=$1; PAIRS=${LOADED_PAIRS:-5}; STEPS=${STEPS_LOADED:-3000}
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-loaded.XXXXXX")
HOGS=""
trap 'kill $HOGS 2>/dev/null; rm -rf "$T"' EXIT
n=$(nproc)
[ "$n" -ge 2 ] || { echo "# loaded: needs 2 CPUs"; exit 0; }
for c in $(seq 1 $((n - 1))); do
	for h in 1 2; do
		taskset -c "$c" sh -c 'while :; do :; done' &
		HOGS="$HOGS $!"
	done
done
sleep 0.5
W=${LOADED_CMD:-"python3 tests/bench/launch_loop.py $LIB --steps $STEPS"}
# the fake loop at the H200 loop's pace, as overhead.sh runs it: each launch
# burns a PyTorch operator's host time, so the loop keeps its CPU busy
export FAKECUDA_LAUNCH_NS=${FAKECUDA_LAUNCH_NS:-40000} FAKECUDA_KERNEL_US=${FAKECUDA_KERNEL_US:-20}
wall() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p'; }
faster=0
for r in $(seq "$PAIRS"); do
	$W | wall >>"$T/u"
	b=$(INGERO_TRACER_BATCH=1 "$INGERO_COLLECTOR" -q -o "$T/b.db" --sample-hz 99 -- $W 2>/dev/null | wall)
	o=$(INGERO_TRACER_BATCH=0 "$INGERO_COLLECTOR" -q -o "$T/o.db" --sample-hz 99 -- $W 2>/dev/null | wall)
	echo "$b" >>"$T/b"; echo "$o" >>"$T/o"
	faster=$(awk -v b="$b" -v o="$o" -v f="$faster" 'BEGIN {print f + (b < o)}')
	rm -f "$T"/*.db*
done
med() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
u=$(med "$T/u")
echo "loaded_pairs=$PAIRS"
echo "loaded_untraced_wall_s=$u"
echo "loaded_batch_pct=$(awk -v t="$(med "$T/b")" -v u="$u" 'BEGIN {printf "%.2f", 100 * (t / u - 1)}')"
echo "loaded_nobatch_pct=$(awk -v t="$(med "$T/o")" -v u="$u" 'BEGIN {printf "%.2f", 100 * (t / u - 1)}')"
echo "loaded_batch_faster_pairs=$faster"
