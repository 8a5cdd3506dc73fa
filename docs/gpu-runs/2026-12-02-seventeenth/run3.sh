#!/bin/sh
# device call 3 (seventeenth session): the toggle of the preload with the steady GPU-mark ration
# (one per 4 ms, halved every 500 of its marks with no new kernel, to a sixteenth) and the written
# lines fetched owned — seven processes of 1,100 chunks, the A/A in the first
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r3; rm -rf $T; mkdir -p $T
ANALYZE=$D/ingero-analyze TOGGLE=7 TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout 555 sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
tail -10 $T/toggle.txt
cd /tmp && tar czf $OUT/r3.tgz r3
