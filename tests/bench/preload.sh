#!/bin/sh
# preload.sh — `make bench-preload`: what libingero_preload.so adds to a
# no-op CUDA call, against what an eBPF uprobe + uretprobe pair on the same
# function costs.  Prints key=value lines (comments start with #):
#
#   base_ns              the no-op fake cudaStreamSynchronize alone
#   preload_ns_nostack   added by the library, no stack (INGERO_STACKS=none)
#   preload_ns_stack     added with a 16-frame native stack on every call
#                        (INGERO_STACK_BUDGET_PPM=1000000: no stack-time budget)
#   preload_ns_stack_budget  the same under the default stack-time budget
#                        (0.5 % of the thread's time, after a starting credit
#                        of 50 ms of stacks, which short runs never exhaust)
#   python_stack_ns      a stack in a Python program (tests/bench/preload_pystack.py:
#                        ctypes calls 8 frames deep in 300-line functions), no
#                        budget, minus the same program without stacks
#   preload_ns_cold_sync, preload_ns_cold_launch  added per call, no stack,
#                        when the program touches COLD_KB (256) of memory
#                        between calls, as a big program does: the library's
#                        data is then out of L1/L2 at each call (syncs, which
#                        go through the runtime's and the driver's wrappers,
#                        and kernel launches; N/4 calls)
#   preload_ns_nostack_first_lap  as preload_ns_nostack, timed over calls
#                        FIRST_LAP_W+1 to FIRST_LAP_W+N (50,000: the window this
#                        bench used before 2026-12-04), which holds most of the
#                        shared ring's first lap: calls that overtake the sender's
#                        prefault of the ring take its page faults themselves
#                        (~12 us a page in the dev VM: ~35 ns a call of the
#                        window), a start-up cost the other figures leave out
#   uprobe_ns            added by a uprobe+uretprobe pair (root; else "skipped")
#   uprobe_over_preload  uprobe_ns / preload_ns_nostack
#
# Each figure is the median over RUNS runs (interleaved) of the calling
# thread's CPU time per call (CLOCK_THREAD_CPUTIME_ID) over N calls after W
# warm-up calls, 20 frames deep.  W (100,000) is past the first lap of the
# default ring (65,536 slots) and a thread's lane (2,048): a call at this
# rate outruns the sender, so the first W calls fill them, each page of the
# ring faulted in on its first use (what preload_ns_nostack_first_lap
# shows).  CPU time rather than wall time: on a
# shared or small machine the sender thread and other processes preempt
# the loop, which is not the library's per-call cost.  The collector side
# is the test sink, up for the whole run, so the ring is drained as in
# real use.
set -u
B=${B:-build}
RUNS=${RUNS:-7}
N=${N:-200000}
W=${W:-100000}
FIRST_LAP_W=${FIRST_LAP_W:-50000}
# (the cold runs' warm-up: their launches warm up 1 ms apart, tests/helpers/preload_calls.c)
COLD_W=${COLD_W:-12500}
export FAKECUDA_NOOP=1
. tests/bench/sink.sh   # $T and the sink on $INGERO_ENDPOINT

uprobe=0
if [ "$(id -u)" -eq 0 ] && clang -O2 -g -target bpf -I/usr/include/x86_64-linux-gnu \
	-c tests/bench/preload_uprobe.bpf.c -o "$T/uprobe.bpf.o" 2>"$T/clang.err" &&
	"$B/tests/preload_uprobe" "$T/uprobe.bpf.o" 1000 10 >/dev/null 2>"$T/uprobe.err"; then
	uprobe=1
fi

cpu() { sed -n 's/.*cpu_ns_per_call=\([0-9.]*\).*/\1/p'; }
run_loop() { "$B/tests/preload_calls" loop "$N" "${LOOP_W:-$W}" 20 | cpu; }
COLD_KB=${COLD_KB:-256}
run_cold() { # what (sync|launch), then the environment
	_w=$1; shift
	if [ "$_w" = launch ]; then set -- PRELOAD_CALLS_LAUNCH=1 "$@"; fi
	env PRELOAD_CALLS_THRASH_KB="$COLD_KB" "$@" "$B/tests/preload_calls" loop $((N / 4)) "$COLD_W" 20 | cpu
}
for r in $(seq "$RUNS"); do
	run_loop >>"$T/base"
	INGERO_STACKS=none LD_PRELOAD="$PWD/$B/libingero_preload.so" run_loop >>"$T/nostack"
	LOOP_W=$FIRST_LAP_W run_loop >>"$T/base_lap"
	LOOP_W=$FIRST_LAP_W INGERO_STACKS=none LD_PRELOAD="$PWD/$B/libingero_preload.so" run_loop >>"$T/nostack_lap"
	INGERO_STACKS=all INGERO_STACK_DEPTH=16 INGERO_PYTHON=0 INGERO_STACK_BUDGET_PPM=1000000 \
		LD_PRELOAD="$PWD/$B/libingero_preload.so" run_loop >>"$T/stack"
	INGERO_STACKS=all INGERO_STACK_DEPTH=16 INGERO_PYTHON=0 LD_PRELOAD="$PWD/$B/libingero_preload.so" \
		run_loop >>"$T/budget"
	for what in sync launch; do
		run_cold $what >>"$T/cold_base_$what"
		run_cold $what INGERO_STACKS=none LD_PRELOAD="$PWD/$B/libingero_preload.so" >>"$T/cold_$what"
	done
	[ $uprobe -eq 1 ] && "$B/tests/preload_uprobe" "$T/uprobe.bpf.o" "$N" "$W" | cpu >>"$T/uprobe"
	if command -v python3 >/dev/null 2>&1; then
		INGERO_STACKS=none LD_PRELOAD="$PWD/$B/libingero_preload.so" \
			python3 tests/bench/preload_pystack.py "$B/fakecuda/libcudart.so.13" 20000 | cpu >>"$T/py_none"
		INGERO_STACKS=sync INGERO_STACK_BUDGET_PPM=1000000 LD_PRELOAD="$PWD/$B/libingero_preload.so" \
			python3 tests/bench/preload_pystack.py "$B/fakecuda/libcudart.so.13" 20000 | cpu >>"$T/py_stack"
	fi
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }'; }
base=$(median "$T/base")
nostack=$(echo "$(median "$T/nostack") $base" | awk '{ printf "%.1f", $1 - $2 }')
stack=$(echo "$(median "$T/stack") $base" | awk '{ printf "%.1f", $1 - $2 }')
budget=$(echo "$(median "$T/budget") $base" | awk '{ printf "%.1f", $1 - $2 }')
echo "# $(uname -n), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), kernel $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# median of $RUNS runs, $N calls each after $W warm-up calls, calling thread CPU time per call"
echo "base_ns=$base"
echo "preload_ns_nostack=$nostack"
echo "preload_ns_nostack_first_lap=$(echo "$(median "$T/nostack_lap") $(median "$T/base_lap")" | awk '{ printf "%.1f", $1 - $2 }')"
echo "preload_ns_stack=$stack"
echo "preload_ns_stack_budget=$budget"
for what in sync launch; do
	echo "preload_ns_cold_$what=$(echo "$(median "$T/cold_$what") $(median "$T/cold_base_$what")" | awk '{ printf "%.1f", $1 - $2 }')"
done
if [ -s "$T/py_stack" ]; then
	echo "python_stack_ns=$(echo "$(median "$T/py_stack") $(median "$T/py_none")" | awk '{ printf "%.1f", $1 - $2 }')"
else
	echo "python_stack_ns=skipped"
fi
if [ $uprobe -eq 1 ]; then
	up=$(echo "$(median "$T/uprobe") $base" | awk '{ printf "%.1f", $1 - $2 }')
	echo "uprobe_ns=$up"
	echo "uprobe_over_preload=$(echo "$up $nostack" | awk '{ printf "%.1f", $1 / $2 }')"
else
	echo "# uprobe: not measured (needs root and BPF): $(cat "$T/uprobe.err" "$T/clang.err" 2>/dev/null | head -n 1)"
	echo "uprobe_ns=skipped"
	echo "uprobe_over_preload=skipped"
fi
