#!/bin/sh
# The fifty-fifth session's device calls (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack).
#   a (on the device): on an H200 the toggle (the fiftieth session's `auto`, LIMIT seconds); on
#       another card the corpus call — c51, c57 and c48 collected shorter (half, half and 60 of
#       100 steps: their traces were the corpus's largest, and c77 and c79 wait for the room) —
#       then CUPTI's count of c77's, c65's, c81's, c67's and c21's kernels beside their traces
#       (the fifty-fourth session's truth2, never run then).
case ${1:-} in
a)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"
	case $gpu in
	*H200*) LIMIT=${LIMIT:-470} sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto ;;
	*) NAMES="${NAMES:-c51_workers_oversubscribed c57_loader_slow_sample c48_ddp_gloo_4ranks_transform}" LIMIT=200 \
		sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus
	   NAMES="${TRUTH:-c77_optimizer_foreach_off c65_detect_anomaly_left_on c81_ema_param_loop c67_per_sample_gpu_augment c21_item_every_step}" \
		timeout ${TRUTH_LIMIT:-300} sh docs/gpu-runs/2026-12-07-fiftyfourth/calls.sh truth2
	   # cut off by the limit: what it had
	   [ -f $OUT/truth2.tar.xz ] || (cd /tmp/t2 && rm -f *.db-wal *.db-shm && tar -cf - *.json *.db | xz -T0 -6 >$OUT/truth2.tar.xz) ;;
	esac ;;
*) echo "usage: calls.sh a (on the device)" >&2; exit 2 ;;
esac
