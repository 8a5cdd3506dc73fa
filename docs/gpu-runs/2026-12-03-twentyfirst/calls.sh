#!/bin/sh
# The twenty-first session's three device calls, as run (build 0dec94c: the tracer's threads under
# SCHED_BATCH, faults from the kernel's per-task counts), on one warm machine after a failed start.
# The scripts are the twentieth session's; raw/ holds what came back.
case ${1:-} in
1) PART=sched PROCS=5 LIMIT=480 sh docs/gpu-runs/2026-12-03-twentieth/split.sh 2>&1 | tail -45 ;;
2) PART=mem PROCS=5 LIMIT=480 sh docs/gpu-runs/2026-12-03-twentieth/split.sh 2>&1 | tail -12 ;;
3) timeout 130 sh docs/gpu-runs/2026-12-03-twentieth/next-maps.sh 2>&1 | tail -6
   mkdir -p "$OUT/a" && OUT=$OUT/a PART=all PROCS=5 LIMIT=390 sh docs/gpu-runs/2026-12-03-twentieth/split.sh 2>&1 | tail -12 ;;
*) echo "usage: calls.sh 1|2|3 (on the device, .devbin carried: docs/gpu.md)" >&2; exit 2 ;;
esac
