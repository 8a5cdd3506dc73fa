#!/bin/sh
# device call 3 (fourteenth session): the toggle of cca7090's preload (main's since), two
# processes in the device time left, the A/A in the first
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=$OUT/t; mkdir -p $T
ANALYZE=$D/ingero-analyze TOGGLE=2 TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout 200 sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
tail -8 $T/toggle.txt
cd $OUT && tar czf t.tgz t && rm -rf t
