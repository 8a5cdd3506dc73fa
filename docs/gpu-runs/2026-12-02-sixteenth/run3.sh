#!/bin/sh
# device call 3 (sixteenth session): the measured GPU time and the estimate
# against torch's own CUDA events (tests/bench/gpu_time_check.sh), with the
# analyzer of e299b95 (the range as the median's confidence interval widened
# to hold the mean, work timed in its place); the traces come back too
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r3; rm -rf $T; mkdir -p $T
timeout 300 sh tests/bench/gpu_time_check.sh $D $T/check > $T/gpu_time_check.txt 2>&1
cat $T/gpu_time_check.txt
cd /tmp && tar czf $OUT/r3.tgz r3
