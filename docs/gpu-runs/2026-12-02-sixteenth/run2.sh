#!/bin/sh
# device call 2 (sixteenth session): the launch path's code prefetched into L2
# before the real call (hooks.h ingero_prefetch_code; the bundle's library, "pf")
# against the same code without it ("nopf", -DINGERO_NO_CODE_PREFETCH) and with
# prefetcht0 instead of prefetcht1 ("pf0"): the cold-launch bench with both
# builds in one run, then the library's own time in PyTorch, alternating
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r2; rm -rf $T; mkdir -p $T
LD_LIBRARY_PATH=$D B=$D/bench RUNS=5 N=10000 SO=$D/libingero_preload.so SO_B=$D/nopf/libingero_preload.so \
	timeout 240 sh tests/bench/cold_call.sh > $T/cold.txt 2>&1
cat $T/cold.txt
. tests/bench/inplace_lib.sh
inplace warm $D/libingero_preload.so > $T/inplace.txt
for i in 1 2 3; do
	inplace pf$i $D/libingero_preload.so
	inplace nopf$i $D/nopf/libingero_preload.so
	inplace pf0_$i $D/pf0/libingero_preload.so
done >> $T/inplace.txt
grep -i "self\|per call\|ns a" $T/inplace.txt | head -40
cd /tmp && tar czf $OUT/r2.tgz r2
