#!/bin/sh
# device call 1 (fourteenth session): the twelve corpus workloads traced by main c9af76d (the
# GPU-mark ration in runs, the new kernels' window closed), collect.sh as shipped in
# ../shared/corpus (carried in .devbin/corpus); then the toggle of the same build in the
# time left (the A/A in the first process only)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
t0=$(date +%s)
R=$OUT/c; mkdir -p $R
UNTRACED=0 timeout 330 bash $D/corpus/collect.sh $D $R
echo "collect done $(date +%T) after $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf c1.tgz c/c0[1-6]* && tar czf c2.tgz c/c0[7-9]* c/c1* && rm -rf c && cd - >/dev/null
left=$(( 550 - ( $(date +%s) - t0 ) ))
n=$(( left / 75 )); [ $n -gt 5 ] && n=5
echo "toggle: $n processes in $left s"
if [ $n -ge 1 ]; then
T=$OUT/t; mkdir -p $T
ANALYZE=$D/ingero-analyze TOGGLE=$n TOGGLE_AA=1 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout $left sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
cat $T/toggle.txt | tail -30
cd $OUT && tar czf t.tgz t && rm -rf t
fi
ls -la $OUT
