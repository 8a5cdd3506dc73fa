#!/bin/sh
# The thirty-ninth session's device calls (build bbc5714 packed: `make bundle && sh
# docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`; carry .devpack).
#   marks: what one GPU mark costs the loop, amplified — the toggle with TURNS="full marks16"
#       (marks16: the calling threads' ration at 250 µs instead of 4 ms and never stretched,
#       tests/bench/turns_lib.sh), processes interleaved on one host, CHUNKS=600; per process
#       the marks its trace holds (by the threads / by the watcher); marks16 less full, chunk
#       against chunk (toggle_diff).  The cost a mark = that difference over the extra marks.
#       Preceded by the thirty-eighth session's `exit` call (c01, c26: made and dropped).
#   toggle: the same without the exit call (TURNS, PROCS, CHUNKS, LIMIT as given; INGERO_*
#       exported by the caller reach every traced variant's library).  Both print the pool
#       with every kept process of the per-call path (tests/bench/toggle_history.sh); for the
#       next sessions, while the per-call path is cbc922b's: `TURNS=full CHUNKS=1100 PROCS=8
#       LIMIT=470 OUT=$OUT sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle`, then add
#       the call's raw folder to toggle-current.txt.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
marks|toggle)
	[ "$1" = marks ] && timeout 110 sh docs/gpu-runs/2026-12-05-thirtyeighth/calls.sh exit
	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	T=/tmp/mk; rm -rf $T; mkdir -p $T
	ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-6} TOGGLE_AA=0 CHUNKS=${CHUNKS:-600} TSTEPS=30 \
		TURNS="${TURNS:-full marks16}" PARTS=turns timeout ${LIMIT:-420} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 \
		> $T/toggle.txt 2>&1
	rm -f $T/tg/*.db $T/tg/*.db-*
	grep -E "^toggle_(proc|variant)" $T/toggle.txt
	sh tests/bench/toggle_pool.sh $T/tg
	echo "== with every kept process of this per-call path (docs/gpu-runs/toggle-current.txt):"
	sh tests/bench/toggle_history.sh docs/gpu-runs/toggle-current.txt $T/tg | grep '^toggle_variant=full '
	[ "$1" = marks ] && ( . tests/bench/turns_lib.sh   # marks16 less full, chunk against chunk
	  for f in $T/tg/toggle.full.*.out $T/tg/toggle.marks16.*.out; do
		[ -f "$f" ] || continue; b=${f##*/toggle.}; v=${b%%.*}; p=${b#*.}; p=${p%.out}
		toggle_rows "$v" "$p" "$f"
	  done > $T/rows.txt
	  toggle_diff $T/rows.txt toggle_marks16_vs_full marks16 full )
	cd /tmp && tar czf $OUT/$1.tgz mk ;;
*) echo "usage: calls.sh marks|toggle (on the device)" >&2; exit 2 ;;
esac
