#!/bin/sh
# device call 2 (eleventh session): in place new/old, toggle full (8333afa) with many chunks
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
inplace() { # tag lib extra-env...
	tag=$1; lib=$2; shift 2
	env INGERO_PRELOAD=$lib INGERO_SELF_TIME=1 INGERO_CAPTURE=cudaProfilerApi "$@" $D/ingero-run -q -o /tmp/s.db -- \
		python3 examples/train_overhead.py --steps 30 --chunks 100 --toggle 2>&1 | grep '^ingero:' | sed "s/^/$tag /"
}
{
inplace warm $D/libingero_preload.so
inplace new $D/libingero_preload.so
inplace old $D/old/libingero_preload.so
inplace new2 $D/libingero_preload.so INGERO_BPF_STATS=1
$D/ingero-analyze stats /tmp/s.db | grep -A14 "BPF"
} > $R/inplace.txt 2>&1
echo "inplace done $(date +%T)"
ANALYZE=$D/ingero-analyze TOGGLE=2 CHUNKS=1400 TSTEPS=30 TURNS="full" PARTS=turns \
	timeout 420 sh tests/bench/gpu_dataloader.sh $D $R/tg 7000000 0 > $R/toggle.txt 2>&1
$D/ingero-analyze stats $R/tg/toggle.db 2>&1 | grep -A14 BPF >> $R/toggle.txt
rm -f $R/tg/*.db $R/tg/*.db-*
echo "toggle done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
