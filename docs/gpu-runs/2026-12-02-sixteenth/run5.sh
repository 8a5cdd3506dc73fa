#!/bin/sh
# device call 5 (sixteenth session): c30 (.item() every 10th step, host-bound) and c31 (bf16
# autocast, GPU-bound), their expectations committed before these traces; untraced, then traced
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=/tmp/r5; rm -rf $R; mkdir -p $R
UNTRACED=1 timeout 500 bash $D/corpus/collect.sh $D $R c30_item_every_10_steps c31_bf16_autocast_gpu_bound
for n in c30_item_every_10_steps c31_bf16_autocast_gpu_bound; do cat $R/$n.run.txt; head -12 $R/$n.explain.txt | cut -c1-400; done
cd /tmp && tar cf $OUT/r5.tar r5
