#!/bin/sh
# The forty-seventh session's device calls (bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack).
#   auto: on an H200, the toggle (TURNS=full CHUNKS=1100 PROCS=9, as sessions 39-46 planned it);
#       on another card, three classes written before their traces (tests/corpus/pending/): c65
#       (anomaly detection left on), c66 (torch.profiler left on around the loop), c67 (per-sample
#       augmentation on the GPU in a Python loop) through the forty-fifth script's corpus branch.
export PATH=/opt/torch/.venv/bin:$PATH
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" corpus ;;
	esac ;;
corpus)
	NAMES="${NAMES:-c65_detect_anomaly_left_on c66_profiler_left_on c67_per_sample_gpu_augment}" LIMIT=${LIMIT:-420} \
		sh docs/gpu-runs/2026-12-06-fortyfifth/calls.sh corpus ;;
corpus2)	# written after call 1: timm's ResNet-50 healthy (a real library model, a negative control)
		# and torch.compile with a .item() in forward (a graph break and a sync a step)
	NAMES="c68_timm_resnet_amp_healthy c69_compile_graph_break_item" LIMIT=${LIMIT:-300} \
		sh docs/gpu-runs/2026-12-06-fortyfifth/calls.sh corpus ;;
*) echo "usage: calls.sh auto | corpus | corpus2 (on the device)" >&2; exit 2 ;;
esac
