#!/bin/sh
# lines.sh — `make bench-lines`: how many cache lines the library touches per
# kernel launch, and how many instructions it runs, counted by callgrind
# (deterministic: no timing, so a change that saves one line shows as one).
# A program that works between its calls (PyTorch runs ~46 us of Python and
# C++ between launches on the H200 loop) evicts the library's lines each
# time; each line it then touches is a miss, and where the program's
# footprint evicts the L2 too, a trip to L3: on the H200 a call costs ~0.6 us
# in PyTorch against 0.2 us in a hot loop (docs/gpu-runs.md section 8).
# Launches on the fake runtime with PRELOAD_CALLS_THRASH_KB (256) touched
# between them, no stacks, no collector (N stays far below the ring's slots:
# nothing is dropped), 64 KiB of code run between them too (tests/helpers/
# preload_calls.c's code sled: a 32 KiB L1i loses the library's code; the
# 100 warm-up calls and N fit the thread's lane, 2,048 units), a
# 48 KiB L1d and a 2 MiB last level modelled.  The
# library's part of a launch is the inclusive cost of its cudaLaunchKernel
# wrapper less the runtime's own, plus that of the driver wrapper the
# runtime calls (nested: it only passes through) less the driver's own.
# Prints key=value, per launch (code_lines: lines of the library's code
# fetched; on the H200 a launch whose code and data come from L3 costs
# ~0.9 us, from L1/L2 ~0.2: `make bench-cold`):
#   lines_read  lines_written  code_lines  instr           recording (GPU marks off)
#   ..._ring                                              GPU marks off, the
#                                shared ring instead of the thread's lane
#                                (INGERO_LANES=0, the path before lanes)
#   ..._marks                                             with GPU marks
#   ..._drv                      with marks, the launch made through the
#                                driver's cuLaunchKernel as cuGetProcAddress
#                                hands it out (PyTorch's path: recorded there)
#   ..._paused                                            paused
#                                (INGERO_CAPTURE=cudaProfilerApi): the
#                                interposition alone
#   ..._drv_paused               the same through the driver's cuLaunchKernel
#                                (the toggle reads recorded less paused: a
#                                layout that trades the paused path's lines
#                                for the recorded one's shows here)
# and code_lines_run (each variant's suffix): the library's distinct code
# lines a launch runs on the calling thread, without a cache model
# (tests/bench/run_lines.awk): code_lines moves by a line or two when the
# functions move (an instruction straddling two lines is charged to the
# first, and the model's sets change), this one only when the code does.
set -u
B=${B:-build}
N=${N:-1800}
SO=${SO:-$PWD/$B/libingero_preload.so}
CALLS=$B/tests/preload_calls
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "# lines: needs valgrind (callgrind)"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-lines.XXXXXX")
trap 'rm -rf "$T"' EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
export INGERO_ENDPOINT="ipc://$T/none.sock" FAKECUDA_NOOP=1 FAKECUDA_KERNEL_US=1 \
	PRELOAD_CALLS_LAUNCH=1 PRELOAD_CALLS_THRASH_KB=${KB:-256} PRELOAD_CALLS_CODE_KB=${CODE_KB:-64} \
	INGERO_STACKS=none INGERO_LAUNCH_SAMPLE=0 INGERO_CLOCK_TSC=1
# (INGERO_CLOCK_TSC: the GPU machines stamp with the TSC, their clocksource is
# tsc; a VM's kvm-clock would have the library stamp with clock_gettime, a
# path of its own in every wrapper)
# run NAME ENV...: "D1mr D1mw I1mr Ir" per launch of the library's part, the mean
# over the four places the stack can start in a cache line (16-byte steps:
# the environment's size moves it): a frame that straddles a line in one
# costs a line more there, which is not the code's doing
run() {
	name=$1; shift
	for pad in "" xxxxxxxxxxxxxxxx xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; do
		run1 "$name" INGERO_BENCH_PAD="$pad" "$@"
	done | awk '{ for (i = 1; i <= 4; i++) s[i] += $i } END { printf "%.1f %.1f %.1f %.0f\n", s[1] / NR, s[2] / NR, s[3] / NR, s[4] / NR }'
}
run1() {
	name=$1; shift
	env "$@" LD_PRELOAD="$SO" valgrind --tool=callgrind --cache-sim=yes --D1=49152,12,64 \
		--I1=32768,8,64 --LL=2097152,16,64 --callgrind-out-file="$T/$name.out" \
		"$CALLS" loop "$N" 100 >/dev/null 2>&1
	callgrind_annotate --inclusive=yes --threshold=100 --show=Ir,D1mr,D1mw,I1mr "$T/$name.out" 2>/dev/null |
		grep -v "=>" | grep "\\[" | sed 's/([ 0-9.]*%)//g; s/,//g' | awk -v n="$N" '
		/preload\/runtime_launch.c:cudaLaunchKernel / { for (i = 1; i <= 4; i++) v[i] += $i }
		/fakecuda\/runtime.c:cudaLaunchKernel / { for (i = 1; i <= 4; i++) v[i] -= $i }
		/preload\/driver_hooks.c:cuLaunchKernel / { for (i = 1; i <= 4; i++) v[i] += $i }
		/fakecuda\/driver.c:cuLaunchKernel / { for (i = 1; i <= 4; i++) v[i] -= $i }
		END { printf "%.1f %.1f %.1f %.0f\n", v[2] / n, v[3] / n, v[4] / n, v[1] / n }'
}
# run_code NAME ENV...: the library's code lines run a launch (code_lines_run):
# counted only inside the launch wrappers (the toggles: the library's
# cudaLaunchKernel and cuLaunchKernel on, the runtime's and the driver's
# inside them off, whose names they share), from the timed loop's start
# (the warm-up's launches zeroed), on the program's thread (-01)
run_code() {
	name=$1; shift
	env "$@" LD_PRELOAD="$SO" valgrind --tool=callgrind --separate-threads=yes --dump-instr=yes \
		--collect-atstart=no --toggle-collect=cudaLaunchKernel --toggle-collect=cuLaunchKernel \
		--zero-before=preload_calls_timed_loop --callgrind-out-file="$T/$name.code.out" \
		"$CALLS" loop "$N" 100 >/dev/null 2>&1
	awk -v launches="$N" -v object="/${SO##*/}" -f tests/bench/run_lines.awk "$T/$name.code.out-01"
}
echo "# $(uname -n), $(valgrind --version), $(date -u +%Y-%m-%dT%H:%MZ), $N launches, $PRELOAD_CALLS_THRASH_KB KiB touched and $PRELOAD_CALLS_CODE_KB KiB of code run between them"
# (marks: the calling threads' ration scaled to valgrind's pace, ~0.3 ms a
# launch here, so that they mark one launch in ~90 as on the H200 loop —
# 46 us a launch, one mark per INGERO_GPU_MARK_US, 4 ms — not one in ten)
for v in "rec INGERO_GPU_MARKS=0" "ring INGERO_GPU_MARKS=0 INGERO_LANES=0" "marks INGERO_GPU_MARKS=1 INGERO_GPU_MARK_US=25000" \
	"drv INGERO_GPU_MARKS=1 INGERO_GPU_MARK_US=25000 PRELOAD_CALLS_LAUNCH=driver" "paused INGERO_GPU_MARKS=0 INGERO_CAPTURE=cudaProfilerApi" \
	"drv_paused INGERO_GPU_MARKS=0 INGERO_CAPTURE=cudaProfilerApi PRELOAD_CALLS_LAUNCH=driver"; do
	set -- $v; sfx=_$1; [ "$1" = rec ] && sfx=
	set -- $(run $v) $(run_code $v)
	printf 'lines_read%s=%s\nlines_written%s=%s\ncode_lines%s=%s\ninstr%s=%s\ncode_lines_run%s=%s\n' \
		"$sfx" "$1" "$sfx" "$2" "$sfx" "$3" "$sfx" "$4" "$sfx" "$5"
done
