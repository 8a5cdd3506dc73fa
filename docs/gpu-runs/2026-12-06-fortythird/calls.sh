#!/bin/sh
# The forty-third session's device calls (the bundle of f6082de packed by `make bundle && sh
# docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack; preload, BPF
# and collector as in bbc5714's bundle of sections 38-42: none changed since cbc922b).
#   auto: on an H200, the toggle (docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle, with
#       TURNS=full CHUNKS=1100 PROCS=9 LIMIT=520); on another card, `parts` below.
#   auto2: the same, with `sampler` on another card (the bundle of 0e7e5b9 on both).
#   sampler, ration, pyframes: below.
#   auto3: as auto, with `ration` on another card.
#   parts: where a recorded call's cost lands outside the library, in place: examples/
#       train_overhead.py's toggle (CHUNKS chunks of 30 steps) under INGERO_SELF_TIME=1, four
#       configurations run in turns until LIMIT seconds have passed — everything on (full), no
#       on-CPU sampler (--sample-hz 0), no eBPF at all (--cuda-only), no GPU marks
#       (INGERO_GPU_MARKS=0).  Per run the sender's exit lines: the library's own time a recorded
#       call, and per capture mode the real functions' time a call and the program's time
#       between two calls (all gaps under 1 ms, and those under 50 us: the program's code
#       alone) — recording less paused is what recording costs the rest of the loop.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
parts_run() { # TAG INGERO-RUN-FLAGS [ENV=VALUE...]
	__tag=$1; __flags=$2; shift 2
	env INGERO_SELF_TIME=1 INGERO_CAPTURE=cudaProfilerApi "$@" "$D/ingero-run" -q $__flags \
		-o "/tmp/$__tag.db" -- python3 examples/train_overhead.py --steps 30 --chunks "${CHUNKS:-300}" --toggle 2>&1 |
		grep '^ingero:' | sed "s/^/$__tag /"
	rm -f "/tmp/$__tag.db"*
}
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" parts ;;
	esac ;;
parts)
	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	end=$(($(date +%s) + ${LIMIT:-480})); i=0
	while [ "$(date +%s)" -lt "$end" ]; do
		i=$((i + 1))
		parts_run "full.$i" ""
		parts_run "nosampler.$i" "--sample-hz 0"
		parts_run "cudaonly.$i" "--cuda-only"
		parts_run "nomarks.$i" "" INGERO_GPU_MARKS=0
	done 2>&1 | tee $OUT/parts.txt | grep -E 'self time|recording|paused' ;;
sampler)
	# the sampler's one read a Python frame (0e7e5b9, .devpack/devbin.txz) against the four reads
	# of f6082de's bundle (.devpack/devbin_old.txz): the toggle with TURNS="full alt", the two
	# builds' processes interleaved, each process's BPF programs' time by capture mode
	# (full_bpf_modes / alt_bpf_modes: recording, paused, the switch's extra, the sampler's)
	mkdir -p .devbin .devbin_old && tar xJf .devpack/devbin.txz -C .devbin && tar xJf .devpack/devbin_old.txz -C .devbin_old
	T=/tmp/mk; rm -rf $T; mkdir -p $T
	ALT_RUN=$PWD/.devbin_old/ingero-run ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-6} TOGGLE_AA=0 CHUNKS=${CHUNKS:-600} \
		TSTEPS=30 TURNS="full alt" PARTS=turns timeout ${LIMIT:-470} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 \
		> $T/toggle.txt 2>&1
	rm -f $T/tg/*.db $T/tg/*.db-*
	grep -E "^toggle_(proc|variant|full_vs)" $T/toggle.txt
	cd /tmp && tar czf $OUT/sampler.tgz mk ;;
pyframes)
	# the one-read walk on the device's CPython (3.12): a traced pure-Python thread 40 frames
	# deep (tests/bench/python_deep.py), sampled at 199 Hz, by this bundle's collector and by
	# f6082de's; per build the samples, those with Python frames, and the functions they name
	mkdir -p .devbin .devbin_old && tar xJf .devpack/devbin.txz -C .devbin && tar xJf .devpack/devbin_old.txz -C .devbin_old
	python3 --version
	for b in .devbin .devbin_old; do
		rm -f /tmp/p.db*
		$b/ingero-run -q --sample-hz 199 -o /tmp/p.db -- python3 tests/bench/python_deep.py 3 40 >/dev/null 2>&1
		echo "== $b"
		python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT count(*) FROM cpu_samples").fetchone())
print(c.execute("SELECT kind, count(*) FROM cpu_samples c JOIN stack_frames s ON s.stack_id = c.stack_id GROUP BY kind").fetchall())
print(c.execute("SELECT symbol, line, count(*) FROM cpu_samples c JOIN stack_frames s ON s.stack_id = c.stack_id WHERE kind = \"python\" GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5").fetchall())' /tmp/p.db
	done ;;
ration)
	# what the calling threads' GPU-mark ration costs a recorded call in place (parts_run's
	# measure): the default (a mark per 4 ms, stretched while steady), half of it
	# (INGERO_GPU_MARK_US=8000), none by the calling threads (0: the watcher's marks only)
	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	end=$(($(date +%s) + ${LIMIT:-450})); i=0
	while [ "$(date +%s)" -lt "$end" ]; do
		i=$((i + 1))
		parts_run "full.$i" ""
		parts_run "mark8ms.$i" "" INGERO_GPU_MARK_US=8000
		parts_run "watchonly.$i" "" INGERO_GPU_MARK_US=0
	done 2>&1 | tee $OUT/ration.txt | grep -E 'self time' ;;
auto3)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-500} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" ration ;;
	esac ;;
auto2)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" sampler ;;
	esac ;;
*) echo "usage: calls.sh auto | parts | sampler | ration | pyframes | auto2 | auto3 (on the device)" >&2; exit 2 ;;
esac
