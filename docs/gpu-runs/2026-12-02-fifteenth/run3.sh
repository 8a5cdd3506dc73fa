#!/bin/sh
# device call 4 (fifteenth session): c23 again, its run five times longer (300,000 rows: its
# first trace's steady state, 669 ms, held the workers' first batches), traced only
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=/tmp/c4; mkdir -p $R
UNTRACED=0 timeout 200 bash $D/corpus/collect.sh $D $R c23_workers_keep_up
cat $R/*.run.txt
cd /tmp && tar cf $OUT/c4.tar c4
