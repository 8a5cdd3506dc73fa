#!/bin/sh
# device call 6 (sixteenth session): c32 (workers started again every epoch)
# its expectation committed before these traces; untraced, then traced
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=/tmp/r6; rm -rf $R; mkdir -p $R
UNTRACED=1 timeout 500 bash $D/corpus/collect.sh $D $R c32_epochs_no_persistent
for n in c32_epochs_no_persistent; do cat $R/$n.run.txt; head -12 $R/$n.explain.txt | cut -c1-400; done
cd /tmp && tar cf $OUT/r6.tar r6
