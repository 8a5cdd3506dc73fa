#!/bin/sh
# device call 2 (eighteenth session): the toggle of this build, as many processes as the call's
# time holds (each ~75 s: 1,100 chunks of 30 steps), no A/A; pooled with call 1's by
# tests/bench/toggle_pool.sh
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r2; rm -rf $T; mkdir -p $T
ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-7} TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout ${LIMIT:-550} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
cat $T/toggle.txt
cd /tmp && tar czf $OUT/r2.tgz r2
