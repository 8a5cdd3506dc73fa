#!/bin/sh
# fakecuda.sh — the test doubles themselves: the fake libcudart.so.13 /
# libcuda.so.1 look and behave like the real ones where the tracer depends on
# it, and the starve workload runs in every mode with a truthful ground-truth
# file.  No root, no collector; a few seconds.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

RT=$B/fakecuda/libcudart.so.13
DRV=$B/fakecuda/libcuda.so.1
STARVE=$B/tests/starve
PROBE=$B/tests/fakecuda_probe
REAL_RT=${REAL_CUDART:-/usr/local/cuda/lib64/libcudart.so.13}
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

# --- the libraries' faces: sonames, versions, no direct binding -------------------
check_eq "libcudart soname" "libcudart.so.13" \
	"$(readelf -d "$RT" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
check_eq "libcuda soname" "libcuda.so.1" "$(readelf -d "$DRV" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
nm -D --defined-only "$RT" | awk '{print $3}' | sort >"$T/fake_rt.txt"
for s in cudaMemcpyAsync cudaStreamSynchronize __cudaLaunchKernel cudaLaunchKernel cudaLaunchKernelExC \
	cudaGetDriverEntryPoint cudaMemcpyAsync_ptsz __cudaLaunchKernel_ptsz; do
	check "fake libcudart exports $s@@libcudart.so.13" grep -qx "$s@@libcudart.so.13" "$T/fake_rt.txt"
done
if [ -f "$REAL_RT" ]; then
	nm -D --defined-only "$REAL_RT" | awk '{print $3}' | sort >"$T/real_rt.txt"
	check_eq "every fake libcudart export exists, same version, in the real one" "" \
		"$(comm -23 "$T/fake_rt.txt" "$T/real_rt.txt" | tr '\n' ' ')"
else
	skip "no real libcudart.so.13 to compare with ($REAL_RT)"
fi
check "libcuda exports cuGetProcAddress_v2 (unversioned, as the real driver)" \
	sh -c "nm -D --defined-only '$DRV' | grep -q ' T cuGetProcAddress_v2\$'"
check_eq "libcudart does not link libcuda (dlopen only)" "" \
	"$(readelf -d "$RT" | grep NEEDED | grep libcuda)"
check_eq "libcudart binds no driver symbol" "" "$(nm -D --undefined-only "$RT" | awk '{print $2}' | grep '^cu')"
# __cudaLaunchKernel must not reach cudaLaunchKernel through the PLT: no relocation may name it
check_eq "libcudart has no PLT slot for cudaLaunchKernel" "" \
	"$(readelf -rW "$RT" | grep -w 'cudaLaunchKernel')"

# --- behaviour: timing, entry points, fork -------------------------------------------
"$PROBE" >"$T/probe.txt" 2>&1
rc=$?
cat "$T/probe.txt"
check_eq "fakecuda_probe exits 0" 0 "$rc"
"$PROBE" noop >"$T/noop.txt" 2>&1
rc=$?
cat "$T/noop.txt"
check_eq "fakecuda_probe noop exits 0" 0 "$rc"

# --- the workload --------------------------------------------------------------------
SMALL="--batches 12 --rows 2000 --row-bytes 256 --array-mb 4"
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

for mode in direct inline; do
	"$STARVE" --mode $mode $SMALL --truth "$T/$mode.truth" >"$T/$mode.out" 2>&1
	check_eq "starve --mode $mode exits 0" 0 $?
	check_eq "$mode: one truth line" 1 "$(wc -l <"$T/$mode.truth" | tr -d ' ')"
	line=$(cat "$T/$mode.truth")
	check_eq "$mode: role main" main "$(field "$line" role)"
	check_eq "$mode: 12 cudaMemcpyAsync" 12 "$(field "$line" cudaMemcpyAsync)"
	check_eq "$mode: 12 cudaStreamSynchronize" 12 "$(field "$line" cudaStreamSynchronize)"
	check_eq "$mode: 36 __cudaLaunchKernel" 36 "$(field "$line" __cudaLaunchKernel)"
	check_eq "$mode: 12 cudaLaunchKernel" 12 "$(field "$line" cudaLaunchKernel)"
	check_eq "$mode: 12 cuLaunchKernel" 12 "$(field "$line" cuLaunchKernel)"
	check "$mode: summary on stdout" grep -q "^starve: mode=$mode .* loop [0-9.]* s" "$T/$mode.out"
done

"$STARVE" --mode workers --workers 3 $SMALL --worker-calls 2 --truth "$T/w.truth" >"$T/w.out" 2>&1
check_eq "starve --mode workers exits 0" 0 $?
check_eq "workers: 4 truth lines (main + 3 workers)" 4 "$(wc -l <"$T/w.truth" | tr -d ' ')"
check_eq "workers: 4 distinct pids" 4 "$(sed 's/ .*//' "$T/w.truth" | sort -u | wc -l | tr -d ' ')"
main=$(grep 'role=main' "$T/w.truth")
main_pid=$(field "$main" pid)
check_eq "workers: main consumed 12 batches" 12 "$(field "$main" batches)"
check_eq "workers: main made 12 cudaMemcpyAsync" 12 "$(field "$main" cudaMemcpyAsync)"
check_eq "workers: main made 1 cudaMalloc before forking" 1 "$(field "$main" cudaMalloc)"
total=0
good=0
grep 'role=worker' "$T/w.truth" >"$T/workers.txt"
while read -r wl; do
	b=$(field "$wl" batches)
	total=$((total + b))
	[ "$(field "$wl" ppid)" = "$main_pid" ] &&
		[ "$(field "$wl" cudaStreamSynchronize)" = "$((2 * b))" ] &&
		[ "$(field "$wl" cudaMemcpyAsync)" = "$((2 * b))" ] &&
		[ -z "$(field "$wl" cudaMalloc)" ] && good=$((good + 1))
done <"$T/workers.txt"
check_eq "workers: children of main, 2 syncs + 2 copies per batch, no inherited counts" 3 "$good"
check_eq "workers: built 12 batches in all" 12 "$total"

"$STARVE" --mode workers --workers 2 $SMALL --worker-calls 0 --pin --ptsz --exc-launches 1 \
	--truth "$T/p.truth" >/dev/null 2>&1
check_eq "starve --pin --ptsz exits 0" 0 $?
main=$(grep 'role=main' "$T/p.truth")
check_eq "--ptsz: cudaMemcpyAsync_ptsz" 12 "$(field "$main" cudaMemcpyAsync_ptsz)"
check_eq "--ptsz: __cudaLaunchKernel_ptsz" 36 "$(field "$main" __cudaLaunchKernel_ptsz)"
check_eq "--ptsz: cuLaunchKernel_ptsz" 12 "$(field "$main" cuLaunchKernel_ptsz)"
check_eq "--ptsz: cudaLaunchKernelExC_ptsz" 12 "$(field "$main" cudaLaunchKernelExC_ptsz)"
check_eq "--pin: cudaHostAlloc" 1 "$(field "$main" cudaHostAlloc)"
check_eq "--worker-calls 0: workers list no CUDA call" "" \
	"$(grep 'role=worker' "$T/p.truth" | tr ' ' '\n' | grep -E '^(cu|__cu)')"

# --- usage errors ------------------------------------------------------------------------
"$STARVE" --bogus >"$T/bad.out" 2>"$T/bad.err"
check_eq "an unknown flag exits 2" 2 $?
check_eq "... with one line on stderr" 1 "$(wc -l <"$T/bad.err" | tr -d ' ')"
"$STARVE" --workers 0 >/dev/null 2>&1
check_eq "--workers 0 exits 2" 2 $?
"$STARVE" --help >"$T/help.out" 2>&1
check_eq "--help exits 0" 0 $?
check "--help documents --truth" grep -q -- "--truth" "$T/help.out"

finish
