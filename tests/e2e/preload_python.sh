#!/bin/sh
# preload_python.sh — Python callers: the innermost Python frames (file,
# function, line) of the call, read without the GIL (ctypes releases it) and
# with it (PyDLL keeps it), on the main thread and another one; and
# multiprocessing workers (fork, spawn, forkserver) traced with their real
# parent.  Runs with python3, and with every CPython 3.10-3.13 that pyenv has.
# tests/run: pool (no clock it asserts on: run beside another test)
# tests/run: first (20 s of waits at idle priority: at the end of the pool it kept make check waiting)
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_KERNEL_US=1
LIBRT="$PWD/$B/fakecuda/libcudart.so.13"
PY=tests/helpers/preload_ctypes.py

for py in $(pythons); do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
	start_sink "$T/py.sink" -v -i 1000
	INGERO_STACK_BUDGET_PPM=1000000 traced "$py" "$PY" "$LIBRT" >"$T/py.out"   # (frames, not the budget)
	check_eq "python $v: ctypes program exits 0" 0 $?
	wait_sink
	grep '^truth' "$T/py.out" >"$T/py.truth"
	check "python $v: calls counted" compare_truth "$T/py.truth" "$T/py.sink" "python $v"
	set -- $(sed -n 's/^expect sync=\([0-9]*\) step=\([0-9]*\) gil=\([0-9]*\)/\1 \2 \3/p' "$T/py.out")
	file="file=$PWD/$PY"
	check "python $v: sync's line, without the GIL" \
		grep -q "depth=0 $file func=sync_here line=$1\$" "$T/py.sink"
	check "python $v: caller's frame below it (Model.step / step)" \
		grep -Eq "depth=1 $file func=(Model\.)?step line=$2\$" "$T/py.sink"
	check "python $v: another thread's frames (threading bootstrap below)" \
		grep -q "func=.*_bootstrap_inner line=" "$T/py.sink"
	check "python $v: with the GIL held (PyDLL)" grep -q "depth=0 $file func=frames line=$3\$" "$T/py.sink"
done

# Line numbers are cached per thread (preload/python_frames.c): code compiled
# again and again gets the freed code's addresses back, and must not be given
# the old code's lines.  Every stack, no budget: 600 syncs, each with a stack.
start_sink "$T/regen.sink" -v -i 1000
INGERO_STACK_BUDGET_PPM=1000000 traced python3 "$PY" "$LIBRT" regen >"$T/regen.truth"
check_eq "regenerated code: exits 0" 0 $?
wait_sink
check "regenerated code: calls counted" compare_truth "$T/regen.truth" "$T/regen.sink" regen
# calls per innermost line: each call's stack id, through its pyframe line
awk '/^pyframe .* depth=0 file=<regen> func=gen / { sub(/.*stack=/, "", $2); split($0, a, " line="); line[$2] = a[2] }
	/^CALL cudaStreamSynchronize / { for (i = 1; i <= NF; i++) if ($i ~ /^stack=/) n[line[substr($i, 7)]]++ }
	END { for (l in n) if (l != "") print l "x" n[l] }' "$T/regen.sink" | sort >"$T/regen.lines"
check_eq "regenerated code: 100 calls on each of lines 2, 3 (A), 5, 6 (B) and 8, 9 (C)" \
	"2x100 3x100 5x100 6x100 8x100 9x100" \
	"$(tr '\n' ' ' <"$T/regen.lines" | sed 's/ $//')"

# A stack repeated at the same Python frames is given again from the
# thread's memo, not unwound (preload/stack.c): 2,200 syncs from one line, 8
# frames deep, a stack each; the regenerated code's 600 syncs above come
# from 6 lines in 3 code objects that share addresses, each unwound once
start_sink "$T/memo.sink" -i 1000
INGERO_SELF_TIME=1 INGERO_STACKS=sync INGERO_STACK_BUDGET_PPM=1000000 \
	traced python3 tests/bench/preload_pystack.py "$LIBRT" 2000 8 >/dev/null 2>"$T/memo.err"
check_eq "memo: exits 0" 0 $?
wait_sink
set -- $(sed -n 's/^ingero: stacks: \([0-9]*\) unwound, \([0-9]*\) remembered.*/\1 \2/p' "$T/memo.err")
check "memo: at most 3 stacks unwound (${1:-none})" test "${1:-99}" -le 3
check_eq "memo: every other stack remembered" 2200 $((${1:-0} + ${2:-0}))
# (two call sites of the loop at the top: the warm-up's and the timed one's)
check_eq "memo: the sink got two stack definitions for the sync line" 2 \
	"$(grep -c '^pyframe .* depth=0 .*func=f0 ' "$T/memo.sink")"
start_sink "$T/regen2.sink" -i 1000
INGERO_SELF_TIME=1 INGERO_STACK_BUDGET_PPM=1000000 traced python3 "$PY" "$LIBRT" regen >/dev/null 2>"$T/regen.err"
wait_sink
set -- $(sed -n 's/^ingero: stacks: \([0-9]*\) unwound, \([0-9]*\) remembered.*/\1 \2/p' "$T/regen.err")
check "regenerated code: each of its 6 lines unwound at least once (${1:-none})" test "${1:-0}" -ge 6

for method in fork spawn forkserver; do
	start_sink "$T/mp.sink" -i 1500
	traced python3 "$PY" "$LIBRT" mp "$method" >"$T/mp.truth"
	check_eq "multiprocessing $method: exits 0" 0 $?
	wait_sink
	check "multiprocessing $method: workers' calls counted" compare_truth "$T/mp.truth" "$T/mp.sink" "$method"
	bad=0
	while read -r _ pid ppid _; do
		[ "$(sink_field "$T/mp.sink" hello "${pid#pid=}" ppid)" = "${ppid#ppid=}" ] || bad=1
	done <"$T/mp.truth"
	check_eq "multiprocessing $method: workers announced with their real parent" 0 $bad
done

# A Python process's thread that runs no Python (autograd's backward threads
# in PyTorch) takes a launch's sample 1 in 16 times it is due (preload/stack.c):
# 320 launches from Python, then 320 from a native thread, every launch a
# sample (INGERO_LAUNCH_SAMPLE=1), no budget: 320 + 20 stacks
start_sink "$T/nopy.sink" -i 1000
INGERO_SELF_TIME=1 INGERO_LAUNCH_SAMPLE=1 INGERO_STACK_BUDGET_PPM=1000000 \
	traced python3 "$PY" "$LIBRT" nopy "$PWD/$B/tests/libnative_launcher.so" 320 >"$T/nopy.truth" 2>"$T/nopy.err"
check_eq "no-Python thread: exits 0" 0 $?
wait_sink
check "no-Python thread: calls counted" compare_truth "$T/nopy.truth" "$T/nopy.sink" nopy
check_eq "no-Python thread: Python's launches all sampled, the native thread's 1 in 16" 340 \
	"$(grep "api=cudaLaunchKernel count" "$T/nopy.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"
check_eq "no-Python thread: the 300 passed over are said" 300 \
	"$(sed -n 's/.* \([0-9]*\) launch samples passed over.*/\1/p' "$T/nopy.err")"
# a program without Python: every due sample is taken, on any thread
start_sink "$T/cthreads.sink" -i 1000
INGERO_LAUNCH_SAMPLE=1 INGERO_STACK_BUDGET_PPM=1000000 traced "$B/tests/preload_calls" threads 4 80 >/dev/null
check_eq "C threads: exits 0" 0 $?
wait_sink
check_eq "C threads: every launch sampled (320)" 320 \
	"$(grep "api=cudaLaunchKernel count" "$T/cthreads.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"
finish
