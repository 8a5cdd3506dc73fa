#!/bin/sh
# The forty-ninth session's device calls (bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack).
#   auto: on an H200, the toggle (TURNS=full CHUNKS=1100 PROCS=9, as sessions 39-47 planned it);
#       on another card, three classes written before their traces (tests/corpus/pending/): c74
#       (Accelerate, gradient accumulation, the gathered loss read every micro-batch), c75 (HF
#       generate in a thread with a TextIteratorStreamer), c76 (Adam offloaded to the CPU with
#       pageable copies), through the forty-fifth script's corpus branch.
export PATH=/opt/torch/.venv/bin:$PATH
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" corpus ;;
	esac ;;
corpus)
	NAMES="${NAMES:-c74_accelerate_accumulate_gather_item c75_hf_generate_streamer_thread c76_cpu_offloaded_adam}" \
		LIMIT=${LIMIT:-420} sh docs/gpu-runs/2026-12-06-fortyfifth/calls.sh corpus ;;
*) echo "usage: calls.sh auto | corpus (on the device)" >&2; exit 2 ;;
esac
