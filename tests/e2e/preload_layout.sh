#!/bin/sh
# preload_layout.sh — the per-call path's code and data as the build laid
# them out (preload/record.h INGERO_HOT_AT, preload/hot_data.c): a big
# program evicts the library's pages from the TLB between two of its calls,
# so each page a launch touches is a page walk.  Checked on the built
# library with nm:
#   - the launch path of PyTorch's own kernels (the runtime's
#     __cudaLaunchKernel, the driver's cuLaunchKernel entry its driver call
#     passes through, ingero_emit_launch, ingero_gpu_note_slow) lies in one
#     page, in the order it runs, and the driver's recording half (cuBLAS's
#     launches) at most one page further;
#   - the globals every call reads (ingero_hot, ingero_self, ingero_gpu's
#     header) lie in one page, and the GPU streams' slots elsewhere.
. tests/lib.sh
SO=$B/libingero_preload.so
command -v nm >/dev/null || { skip "nm (binutils) missing"; finish; }
check "library built" test -s "$SO"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
nm -S "$SO" >"$T/nm"
# addr SYMBOL / end SYMBOL: its first / last byte, in decimal
# (SYMBOL, or a clone the compiler made of it: SYMBOL.constprop.0, .isra.0)
addr() { set -- $(awk -v s="$1" '$NF == s || index($NF, s ".") == 1 { print $1; exit }' "$T/nm"); echo $((0x${1:-0})); }
end() { set -- $(awk -v s="$1" '$NF == s || index($NF, s ".") == 1 { print $1, $2; exit }' "$T/nm"); echo $((0x${1:-0} + 0x${2:-1} - 1)); }
page() { echo $(($1 / 4096)); }

# PyTorch's own kernels' path in one page, in the order it runs; the
# driver's recording half (cuBLAS's launches) right after it
first=$(addr __cudaLaunchKernel)
check "__cudaLaunchKernel found" test "$first" -gt 0
prev=$first
for f in cuLaunchKernel ingero_emit_launch ingero_gpu_note_slow; do
	a=$(addr "$f")
	check "$f after the function before it on the launch path" test "$a" -gt "$prev"
	check_eq "$f in __cudaLaunchKernel's page" "$(page "$first")" "$(page "$(end "$f")")"
	prev=$a
done
a=$(addr cuLaunchKernel_outer)
check "cuLaunchKernel_outer right after them" test "$a" -gt "$prev" -a "$(page "$a")" -le "$(($(page "$first") + 1))"

hot=$(addr ingero_hot)
check "ingero_hot found" test "$hot" -gt 0
for v in ingero_hot ingero_self ingero_gpu; do
	check_eq "$v (first byte) in the hot data page" "$(page "$hot")" "$(page "$(addr "$v")")"
	check_eq "$v (last byte) in the hot data page" "$(page "$hot")" "$(page "$(end "$v")")"
done
check "the streams' slots are not in it" test "$(page "$(addr ingero_gpu_streams)")" -ne "$(page "$hot")"
finish
