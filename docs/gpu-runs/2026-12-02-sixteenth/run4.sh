#!/bin/sh
# device call 4 (sixteenth session): c29 (.item() every step in a GPU-bound loop), its
# expectation committed before this trace; untraced, then traced
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=/tmp/r4; rm -rf $R; mkdir -p $R
UNTRACED=1 timeout 400 bash $D/corpus/collect.sh $D $R c29_item_gpu_bound
cat $R/c29_item_gpu_bound.run.txt; head -40 $R/c29_item_gpu_bound.explain.txt
cd /tmp && tar cf $OUT/r4.tar r4
