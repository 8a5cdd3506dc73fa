#!/bin/sh
# The forty-third session's device calls (the bundle of f6082de packed by `make bundle && sh
# docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack; preload, BPF
# and collector as in bbc5714's bundle of sections 38-42: none changed since cbc922b).
#   auto: on an H200, the toggle (docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle, with
#       TURNS=full CHUNKS=1100 PROCS=9 LIMIT=520); on another card, `parts` below.
#   auto2: the same, with `sampler` on another card (the bundle of 0e7e5b9 on both).
#   sampler: below.
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
auto2)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" sampler ;;
	esac ;;
*) echo "usage: calls.sh auto | parts | sampler | auto2 (on the device)" >&2; exit 2 ;;
esac
