#!/bin/sh
# The forty-sixth session's device calls (bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack).
#   auto: on an H200, the toggle (TURNS=full CHUNKS=1100 PROCS=9, as sessions 39-45 planned it);
#       on another card, the two library jobs written last session (c61 Lightning, c62 the Hugging
#       Face Trainer), c63 (raw text tokenized in the loop) and c64 (ImageFolder JPEGs decoded in 3
#       workers) through the forty-fifth script's corpus branch.
export PATH=/opt/torch/.venv/bin:$PATH
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) NAMES="c61_lightning_loader_main c62_hf_trainer_log_every_step c63_tokenize_in_loop c64_imagefolder_jpeg_workers" LIMIT=${LIMIT:-400} \
		sh docs/gpu-runs/2026-12-06-fortyfifth/calls.sh corpus ;;
	esac ;;
corpus2)	# written after call 1: a training loop with anomaly detection left on
	NAMES="c65_detect_anomaly_left_on" LIMIT=${LIMIT:-150} sh docs/gpu-runs/2026-12-06-fortyfifth/calls.sh corpus ;;
*) echo "usage: calls.sh auto | corpus2 (on the device)" >&2; exit 2 ;;
esac
