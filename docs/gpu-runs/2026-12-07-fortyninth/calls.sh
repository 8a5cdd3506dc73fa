#!/bin/sh
# The forty-ninth session's device calls (bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack): the
# forty-eighth session's script — `auto`: on an H200 the toggle (TURNS=full CHUNKS=1100 PROCS=9),
# on another card its corpus branch — with this session's three classes written before their
# traces (tests/corpus/pending/): c74 (Accelerate, gradient accumulation, the gathered loss read
# every micro-batch), c75 (HF generate in a thread with a TextIteratorStreamer), c76 (Adam
# offloaded to the CPU with pageable copies).
NAMES="${NAMES:-c74_accelerate_accumulate_gather_item c75_hf_generate_streamer_thread c76_cpu_offloaded_adam}" \
	exec sh docs/gpu-runs/2026-12-07-fortyeighth/calls.sh "$@"
