#!/bin/sh
# device call 7 (sixteenth session): c13 and c32 traced once more — their first two findings are
# close (c13: frees 339 ms, host-bound 336; c32: epoch restarts 1.20 s, host-bound 1.10 s): does
# the order hold on another run? The traces come back and are read by 512c65b's analyzer here.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=/tmp/r7; rm -rf $R; mkdir -p $R
UNTRACED=0 timeout 400 bash $D/corpus/collect.sh $D $R c13_empty_cache_step c32_epochs_no_persistent
cd /tmp && tar cf $OUT/r7.tar r7
