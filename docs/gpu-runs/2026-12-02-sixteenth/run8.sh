#!/bin/sh
# device call 8 (sixteenth session): the toggle of the preload as it is (cca7090's library: only a
# header moved since), six processes, the A/A in the first — to pool with cca7090's 1,044 pairs
# (docs/gpu-runs.md section 15)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r8; rm -rf $T; mkdir -p $T
ANALYZE=$D/ingero-analyze TOGGLE=6 TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout 540 sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
tail -8 $T/toggle.txt
cd /tmp && tar czf $OUT/r8.tgz r8
