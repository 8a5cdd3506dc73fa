#!/bin/sh
# device call 2 (thirteenth session): in place, 09e36be (base) against 44f94b7 (a launch's
# record built as its lane unit), interleaved; then the toggle of 44f94b7, the whole
# tracer, the A/A in the first process only
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
. tests/bench/inplace_lib.sh
{
inplace warm $D/libingero_preload.so
for i in 1 2 3; do
inplace base$i $D/base/libingero_preload.so
inplace new$i $D/libingero_preload.so
done
} > $R/inplace.txt 2>&1
echo "inplace done $(date +%T)"
cat $R/inplace.txt
ANALYZE=$D/ingero-analyze TOGGLE=4 TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS="full" PARTS=turns \
	timeout 420 sh tests/bench/gpu_dataloader.sh $D $R/tg 7000000 0 > $R/toggle.txt 2>&1
rm -f $R/tg/*.db $R/tg/*.db-*
echo "toggle done $(date +%T)"
cat $R/toggle.txt
cd $OUT && tar czf r.tgz r && rm -rf r
