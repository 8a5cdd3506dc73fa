#!/bin/sh
# device call 2 (fourteenth session): cca7090 — the calling threads' GPU-mark runs also where
# the GPU lags; the analyzer timing kernels back to back. The twelve corpus workloads
# re-collected; the estimate against the launch-bound truth (gpu_time_check.sh); then the
# toggle in the time left (the A/A in the first process only)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
t0=$(date +%s)
R=$OUT/c; mkdir -p $R
UNTRACED=0 timeout 330 bash $D/corpus/collect.sh $D $R
echo "collect done $(date +%T) after $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf c1.tgz c/c0[1-6]* && tar czf c2.tgz c/c0[7-9]* c/c1* && rm -rf c && cd - >/dev/null
G=$OUT/g; mkdir -p $G
timeout 90 sh tests/bench/gpu_time_check.sh $D $G/gt > $G/gt.txt 2>&1
cat $G/gt.txt
for f in $G/gt/*.db; do $D/ingero-analyze explain --json "$f" > "${f%.db}.full.json" 2>/dev/null; done
rm -f $G/gt/*.db $G/gt/*.db-*
cd $OUT && tar czf g.tgz g && rm -rf g && cd - >/dev/null
echo "gt done after $(( $(date +%s) - t0 )) s"
left=$(( 550 - ( $(date +%s) - t0 ) ))
n=$(( (left - 15) / 80 )); [ $n -gt 5 ] && n=5
echo "toggle: $n processes in $left s"
if [ $n -ge 1 ]; then
T=$OUT/t; mkdir -p $T
ANALYZE=$D/ingero-analyze TOGGLE=$n TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout $left sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
tail -30 $T/toggle.txt
cd $OUT && tar czf t.tgz t && rm -rf t
fi
ls -la $OUT
