#!/bin/sh
# device call 1 (twelfth session): in place product / segment build / without the
# kernel-set prefetch / marks off, then the toggle of the product build
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
. tests/bench/inplace_lib.sh
{
inplace warm $D/libingero_preload.so
inplace prod1 $D/libingero_preload.so
inplace seg1 $D/seg/libingero_preload.so
inplace nokpf1 $D/nokpf/libingero_preload.so
inplace prod2 $D/libingero_preload.so
inplace seg2 $D/seg/libingero_preload.so
inplace nokpf2 $D/nokpf/libingero_preload.so
inplace nomarks $D/libingero_preload.so INGERO_GPU_MARKS=0
inplace prod3 $D/libingero_preload.so
} > $R/inplace.txt 2>&1
echo "inplace done $(date +%T)"
ANALYZE=$D/ingero-analyze TOGGLE=2 CHUNKS=1200 TSTEPS=30 TURNS="full" PARTS=turns \
	timeout 330 sh tests/bench/gpu_dataloader.sh $D $R/tg 7000000 0 > $R/toggle.txt 2>&1
rm -f $R/tg/*.db $R/tg/*.db-*
echo "toggle done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
