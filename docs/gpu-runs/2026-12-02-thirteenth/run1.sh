#!/bin/sh
# device call 1 (thirteenth session): the toggle of 09e36be (threads without Python
# frames sample 1 in 16), the whole tracer only; the A/A in the first process only
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
ANALYZE=$D/ingero-analyze TOGGLE=5 TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS="full" PARTS=turns \
	timeout 540 sh tests/bench/gpu_dataloader.sh $D $R/tg 7000000 0 > $R/toggle.txt 2>&1
rm -f $R/tg/*.db $R/tg/*.db-*
echo "toggle done $(date +%T)"
cat $R/toggle.txt
cd $OUT && tar czf r.tgz r && rm -rf r
