#!/bin/sh
# device call 3 (twelfth session): the toggle of d9f5169, the whole tracer and without GPU marks
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
ANALYZE=$D/ingero-analyze TOGGLE=2 CHUNKS=1100 TSTEPS=30 TURNS="full nomarks" PARTS=turns \
	timeout 500 sh tests/bench/gpu_dataloader.sh $D $R/tg 7000000 0 > $R/toggle.txt 2>&1
rm -f $R/tg/*.db $R/tg/*.db-*
echo "toggle done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
