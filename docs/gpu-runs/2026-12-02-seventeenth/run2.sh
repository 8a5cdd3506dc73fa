#!/bin/sh
# device call 2 (seventeenth session): the library's own time a recorded call
# in place (tests/bench/inplace_lib.sh), interleaved: main before this session
# (b967e51, "P"), the steady ration alone (105ff4f, "NP"), with the written
# lines fetched owned (feb62b6, "N"), and N with INGERO_GPU_MARK_STEADY=100
# ("NS": the ration stretched within the short run, as a long run has it)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r2; rm -rf $T; mkdir -p $T
. tests/bench/inplace_lib.sh
inplace warm $D/libingero_preload.so > $T/inplace.txt
for i in 1 2 3; do
	inplace P$i $D/libingero_preload_main.so
	inplace NP$i $D/libingero_preload_np.so
	inplace N$i $D/libingero_preload.so
	[ $i -le 2 ] && inplace NS$i $D/libingero_preload.so INGERO_GPU_MARK_STEADY=100
done >> $T/inplace.txt
grep "self time:" $T/inplace.txt
cd /tmp && tar czf $OUT/r2.tgz r2
