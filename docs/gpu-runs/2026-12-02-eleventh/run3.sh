#!/bin/sh
# device call 3 (eleventh session): BPF per program in the loop; toggle full vs cudaonly (no eBPF)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
bpf() { # tag chunks
	INGERO_BPF_STATS=1 $D/ingero-run -q -o /tmp/b$1.db -- python3 examples/train_overhead.py --steps 30 --chunks $2 --toggle >/dev/null 2>&1
	$D/ingero-analyze stats /tmp/b$1.db | grep -A14 "BPF" | sed "s/^/$1 /"
	$D/ingero-analyze stats /tmp/b$1.db | grep -E "^(cuLaunch|__cuda|Trace)" | sed "s/^/$1 /"
}
{ bpf startup 0; bpf loop 400; } > $R/bpf.txt 2>&1
echo "bpf done $(date +%T)"
ANALYZE=$D/ingero-analyze TOGGLE=1 CHUNKS=1400 TSTEPS=30 TURNS="full cudaonly" PARTS=turns \
	timeout 380 sh tests/bench/gpu_dataloader.sh $D $R/tg 7000000 0 > $R/toggle.txt 2>&1
rm -f $R/tg/*.db $R/tg/*.db-*
echo "toggle done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
