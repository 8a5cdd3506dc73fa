#!/bin/sh
# Ran in the twentieth session (calls A and B): the nineteenth session's next-split.sh on
# 31de6c3 (the collector's maps re-reads rationed), plus each trace's session rows that say what
# the tracer did (maps_reads, mode, sample_hz) read before the traces are deleted.  PART=samples
# holds the on-CPU sampler paused in every second recording window, PART=all every eBPF record;
# the summary's toggle_split=full line is that part's share, chunk against chunk.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r-${PART:-samples}; rm -rf $T; mkdir -p $T
INGERO_SPLIT_BPF=${PART:-samples} ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-6} TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 \
	TURNS=full PARTS=turns timeout ${LIMIT:-520} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
for db in $T/tg/*.db; do
	[ -f "$db" ] && python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(sys.argv[1].split("/")[-1], " ".join("%s=%s" % r for r in c.execute(
    "select key, value from session where key in (\"maps_reads\", \"mode\", \"sample_hz\", \"start_mono_ns\", \"end_mono_ns\")")))' "$db"
done > $T/sessions.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
cat $T/toggle.txt $T/sessions.txt
SPLIT=1 sh tests/bench/toggle_pool.sh $T/tg
cd /tmp && tar czf $OUT/r.tgz ${T#/tmp/}
