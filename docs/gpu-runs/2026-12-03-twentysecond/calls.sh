#!/bin/sh
# The twenty-second session's device calls (build 2d06f56: the sender and collector under
# SCHED_BATCH, the GPU watcher on the default policy, the collector's aggregates drained once
# a second).  Run on the device from the repository root with .devbin carried (docs/gpu.md).
#   1: the twenty-first session's next-loaded.sh (SCHED_BATCH with no idle CPU on real PyTorch,
#      and each thread's policy in a traced DataLoader job), ~5 min
#   2, 3: the toggle, every recording window whole (no INGERO_SPLIT_BPF): PROCS processes of
#      1,100 chunks of 30 steps, cut at LIMIT seconds (the processes finished are kept)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
1) timeout 420 sh docs/gpu-runs/2026-12-03-twentyfirst/next-loaded.sh 2>&1 | tail -40 ;;
2|3)
	T=/tmp/tg$1; rm -rf $T; mkdir -p $T
	ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-9} TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
		timeout ${LIMIT:-540} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
	rm -f $T/tg/*.db $T/tg/*.db-*
	grep -E "^toggle_(proc|variant|split|vs_aa)" $T/toggle.txt
	sh tests/bench/toggle_pool.sh $T/tg
	cd /tmp && tar czf $OUT/r$1.tgz ${T#/tmp/} ;;
*) echo "usage: calls.sh 1|2|3 (on the device, .devbin carried: docs/gpu.md)" >&2; exit 2 ;;
esac
