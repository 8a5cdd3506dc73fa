#!/bin/sh
# device call 1 (seventeenth session): where a recorded call's time goes now,
# in place (tests/bench/inplace_lib.sh): main's library (P), its GPU-mark
# ration 8x rarer (M32: INGERO_GPU_MARK_US=32000), no launch stack samples
# (LS0: INGERO_LAUNCH_SAMPLE=0), both, no GPU marks (NM), and the segment
# build (SEG: -DINGERO_SELF_SEGMENTS=6), interleaved
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r1; rm -rf $T; mkdir -p $T
. tests/bench/inplace_lib.sh
L=$D/libingero_preload.so; S=$D/libingero_preload_seg.so
inplace warm $L > $T/inplace.txt
for i in 1 2; do
	inplace P$i $L
	inplace M32_$i $L INGERO_GPU_MARK_US=32000
	inplace LS0_$i $L INGERO_LAUNCH_SAMPLE=0
	inplace M32LS0_$i $L INGERO_GPU_MARK_US=32000 INGERO_LAUNCH_SAMPLE=0
	inplace NM$i $L INGERO_GPU_MARKS=0
	inplace SEG$i $S
done >> $T/inplace.txt
inplace P3 $L >> $T/inplace.txt
inplace M32_3 $L INGERO_GPU_MARK_US=32000 >> $T/inplace.txt
inplace SEGM32LS0 $S INGERO_GPU_MARK_US=32000 INGERO_LAUNCH_SAMPLE=0 >> $T/inplace.txt
cat $T/inplace.txt
cd /tmp && tar czf $OUT/r1.tgz r1
