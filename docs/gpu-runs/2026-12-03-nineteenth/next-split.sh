#!/bin/sh
# For the next turn's device calls (written in the nineteenth session, not yet run): the toggle
# of this build with one part of the eBPF evidence held paused in every second recording window
# (INGERO_SPLIT_BPF, collector/tracer.h) — the part's share of recording measured chunk against
# chunk within the same processes, which section 20's runs of separate processes could not
# settle.  PART=samples (the on-CPU sampler) in one call, PART=all (every eBPF record) in the
# next; PROCS processes of 1,100 chunks (~75 s each), no A/A.  The summary's toggle_split=full
# line is the part's share; pool the calls' chunk files with
# `SPLIT=1 sh tests/bench/toggle_pool.sh DIR...` (each call's r.tgz, unpacked).
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r-${PART:-samples}; rm -rf $T; mkdir -p $T
INGERO_SPLIT_BPF=${PART:-samples} ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-6} TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 \
	TURNS=full PARTS=turns timeout ${LIMIT:-520} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
cat $T/toggle.txt
SPLIT=1 sh tests/bench/toggle_pool.sh $T/tg
cd /tmp && tar czf $OUT/r.tgz ${T#/tmp/}
