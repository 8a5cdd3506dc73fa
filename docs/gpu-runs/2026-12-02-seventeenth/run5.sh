#!/bin/sh
# device call 5 (seventeenth session): (1) the library's own time a recorded call over a long
# run (600 chunks, ~40 s of recording), the steady ration against the whole one
# (INGERO_GPU_MARK_STEADY=0), twice each; (2) c29 and c10, the corpus traces the steady ration
# thins most, collected again; (3) the toggle, four more processes, while time lasts
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r5; rm -rf $T; mkdir -p $T
long() { # TAG ENV...
	tag=$1; shift
	env INGERO_SELF_TIME=1 INGERO_CAPTURE=cudaProfilerApi "$@" "$D/ingero-run" -q -o /tmp/$tag.db -- \
		python3 examples/train_overhead.py --steps 30 --chunks 600 --toggle 2>&1 | grep '^ingero:' | sed "s/^/$tag /"
	"$D/ingero-analyze" stats /tmp/$tag.db 2>/dev/null | grep -E "^Call stacks" | sed "s/^/$tag /"
	echo "$tag gpu_marks_by_thread=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM gpu_marks WHERE flags & 1 = 0").fetchone()[0])' /tmp/$tag.db 2>&1 | tail -1)"
	rm -f /tmp/$tag.db*
}
for i in 1 2; do
	long steady$i
	long whole$i INGERO_GPU_MARK_STEADY=0
done > $T/long.txt 2>&1
cat $T/long.txt
UNTRACED=0 timeout 150 bash $D/corpus/collect.sh $D $T/corpus c29_item_gpu_bound c10_contended_loop > $T/corpus.txt 2>&1
cat $T/corpus.txt
ANALYZE=$D/ingero-analyze TOGGLE=4 TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout 230 sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
tail -6 $T/toggle.txt
cd /tmp && tar czf $OUT/r5.tgz r5
