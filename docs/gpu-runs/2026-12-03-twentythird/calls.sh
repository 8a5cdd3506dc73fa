#!/bin/sh
# The twenty-third session's device calls.  Run on the device from the repository root with
# .devbin carried (docs/gpu.md); the bundle's library is this session's build, and two
# earlier ones lie beside it (their RPATH is $ORIGIN: the bundle's libraries), built here in
# worktrees and stripped:
#   old-2d06f56.so  what main shipped at the start of the twenty-second session (section 23's pool)
#   old-ae52874.so  main at the start of this session (the launch path laid out straight, the
#               11-argument driver entries as the nesting check, refused samples on the path)
#   1: in place, the library's own time a recorded call (INGERO_SELF_TIME), 600 chunks a run,
#      the three libraries in turn, two rounds (~230 s)
#   2, 3: the toggle of this build, every recording window whole: PROCS processes of 1,100
#      chunks of 30 steps, cut at LIMIT seconds (the processes finished are kept)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
1)	. tests/bench/inplace_lib.sh
	for r in 1 2; do
		INPLACE_CHUNKS=600 inplace 2d06f56-$r "$D/old-2d06f56.so"
		INPLACE_CHUNKS=600 inplace ae52874-$r "$D/old-ae52874.so"
		INPLACE_CHUNKS=600 inplace new-$r "$D/libingero_preload.so"
	done 2>&1 | tee "$OUT/inplace.txt" ;;
2|3) sh docs/gpu-runs/2026-12-03-twentysecond/calls.sh "$1" ;;   # (its toggle: PROCS, LIMIT)
*) echo "usage: calls.sh 1|2|3 (on the device, .devbin carried: docs/gpu.md)" >&2; exit 2 ;;
esac
