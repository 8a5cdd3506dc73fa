#!/bin/sh
# preload_layout.sh — the per-call path's code and data as the build laid
# them out (preload/record.h INGERO_HOT_AT, preload/hot_data.c): a big
# program evicts the library's pages from the TLB between two of its calls,
# so each page a launch touches is a page walk.  Checked on the built
# library with nm:
#   - PyTorch's launch path (the driver's cuLaunchKernel as cuGetProcAddress
#     hands it out, its out-of-line half, ingero_emit_launch,
#     ingero_gpu_note_slow) lies in one page, in the order it runs;
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
addr() { set -- $(awk -v s="$1" '$NF == s { print $1; exit }' "$T/nm"); echo $((0x${1:-0})); }
end() { set -- $(awk -v s="$1" '$NF == s { print $1, $2; exit }' "$T/nm"); echo $((0x${1:-0} + 0x${2:-1} - 1)); }
page() { echo $(($1 / 4096)); }

first=$(addr cuLaunchKernel)
check "cuLaunchKernel found" test "$first" -gt 0
prev=$first
for f in cuLaunchKernel_outer ingero_emit_launch ingero_gpu_note_slow; do
	a=$(addr "$f")
	check "$f after the function before it on the launch path" test "$a" -gt "$prev"
	check_eq "$f in cuLaunchKernel's page" "$(page "$first")" "$(page "$(end "$f")")"
	prev=$a
done

hot=$(addr ingero_hot)
check "ingero_hot found" test "$hot" -gt 0
for v in ingero_hot ingero_self ingero_gpu; do
	check_eq "$v (first byte) in the hot data page" "$(page "$hot")" "$(page "$(addr "$v")")"
	check_eq "$v (last byte) in the hot data page" "$(page "$hot")" "$(page "$(end "$v")")"
done
check "the streams' slots are not in it" test "$(page "$(addr ingero_gpu_streams)")" -ne "$(page "$hot")"
finish
