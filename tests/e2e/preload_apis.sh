#!/bin/sh
# preload_apis.sh — every interposed API is seen exactly once per call, under
# the name the program called: the runtime API (with _ptsz/_ptds variants,
# __cudaLaunchKernel, which reaches the launch without cudaLaunchKernel's
# PLT slot), and driver APIs through pointers from cuGetProcAddress_v2 (taken
# with dlsym on libcuda's handle), cudaGetDriverEntryPoint and ...ByVersion.
# Nested runtime → driver calls count once.  Also: kernel names, the
# pinned/pageable flag, stacks on syncs and copies.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_KERNEL_US=1

start_sink "$T/all.sink" -i 1000
traced "$B/tests/preload_calls" all 7 >"$T/all.truth"
check_eq "runtime workload runs under the library" 0 $?
wait_sink
check "every runtime API counted exactly" compare_truth "$T/all.truth" "$T/all.sink" runtime
pid=$(sed -n '1s/^truth pid=\([0-9]*\) .*/\1/p' "$T/all.truth")
check_eq "nested driver calls are not counted" 0 \
	"$(grep -c "^calls pid=$pid api=cu[A-Z]" "$T/all.sink")"
check_eq "host stubs named from __cudaRegisterFunction" 1 "$(grep -c 'name=_Z8kernel_av$' "$T/all.sink")"
check_ge "launch handles (__cudaGetKernel) named too" "$(grep -c 'name=_Z8kernel_bv$' "$T/all.sink")" 2
check_eq "pinned source copies flagged pinned" 7 \
	"$(grep "api=cudaMemcpy count" "$T/all.sink" | sed 's/.* pinned=\([0-9]*\).*/\1/')"
check_eq "pageable destination copies flagged pageable" 7 \
	"$(grep "api=cudaMemcpy_ptds count" "$T/all.sink" | sed 's/.* pageable=\([0-9]*\).*/\1/')"
check_eq "every sync has a stack" 7 \
	"$(grep "api=cudaStreamSynchronize count" "$T/all.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"
check_eq "stack-less launches by default (1 in 256 sampled)" 0 \
	"$(grep "api=cudaLaunchKernel count" "$T/all.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"
check_eq "COUNTS: made = calls received" "$(grep '^totals' "$T/all.sink" | sed 's/.* calls=\([0-9]*\).*/\1/')" \
	"$(sink_field "$T/all.sink" counts "$pid" made)"
check_eq "nothing malformed" 0 "$(grep '^totals' "$T/all.sink" | sed 's/.*malformed=\([0-9]*\).*/\1/')"

start_sink "$T/drv.sink" -i 1000
traced "$B/tests/preload_calls" driver 5 >"$T/drv.truth"
check_eq "driver workload runs under the library" 0 $?
wait_sink
check "every driver API counted exactly (cuGetProcAddress, cudaGetDriverEntryPoint[ByVersion])" \
	compare_truth "$T/drv.truth" "$T/drv.sink" driver
check_eq "CUfunction named by cuFuncGetName" 1 "$(grep -c 'name=driver_kernel$' "$T/drv.sink")"

# INGERO_STACKS and INGERO_LAUNCH_SAMPLE change what gets stacks
start_sink "$T/cfg.sink" -i 1000
INGERO_STACKS=launch INGERO_LAUNCH_SAMPLE=0 traced "$B/tests/preload_calls" all 2 >/dev/null
wait_sink
check_eq "INGERO_STACKS=launch: launches get stacks" 2 \
	"$(grep "api=cudaLaunchKernel count" "$T/cfg.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"
check_eq "INGERO_STACKS=launch: syncs do not" 0 \
	"$(grep "api=cudaStreamSynchronize count" "$T/cfg.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"

# the stack budget (INGERO_STACK_BUDGET_PPM): 20,000 syncs that all want a
# 20-frame stack; 1 ppm allows ~10 us of stack time, so a handful of stacks,
# and every other sync says its stack was withheld
field() { grep "api=cudaStreamSynchronize count" "$1" | sed "s/.* $2=\([0-9]*\).*/\1/"; }
start_sink "$T/bud.sink" -i 1000
INGERO_STACK_BUDGET_PPM=1 traced "$B/tests/preload_calls" loop 20000 0 20 >/dev/null
wait_sink
n=$(field "$T/bud.sink" count)
check_ge "budget: every sync recorded ($n)" "$n" 20000
check_ge "budget: the first syncs get stacks" "$(field "$T/bud.sink" stacks)" 1
check "budget: few stacks at 1 ppm ($(field "$T/bud.sink" stacks))" \
	test "$(field "$T/bud.sink" stacks)" -lt 200
check_eq "budget: a sync without its stack is flagged withheld" "$n" \
	"$(($(field "$T/bud.sink" stacks) + $(field "$T/bud.sink" withheld)))"
start_sink "$T/nobud.sink" -i 1000
INGERO_STACK_BUDGET_PPM=1000000 traced "$B/tests/preload_calls" loop 20000 0 20 >/dev/null
wait_sink
check_eq "budget 1000000 (no limit): every sync has a stack" "$(field "$T/nobud.sink" count)" \
	"$(field "$T/nobud.sink" stacks)"
check_eq "budget 1000000: none withheld" 0 "$(field "$T/nobud.sink" withheld)"
start_sink "$T/zero.sink" -i 1000
INGERO_STACK_BUDGET_PPM=0 traced "$B/tests/preload_calls" all 3 >/dev/null
wait_sink
check_eq "budget 0: no stacks at all" 0 "$(grep '^totals' "$T/zero.sink" | sed 's/.* stacks=\([0-9]*\).*/\1/')"
finish
