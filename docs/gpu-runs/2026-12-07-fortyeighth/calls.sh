#!/bin/sh
# The forty-eighth session's device calls (bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack).
#   auto: on an H200, the toggle (TURNS=full CHUNKS=1100 PROCS=9, as sessions 39-47 planned it);
#       on another card, three classes written before their traces (tests/corpus/pending/): c70
#       (the caching allocator at its memory cap: frees and retries), c71 (timing hooks that
#       synchronize around every layer), c72 (torch.compile with a .item() in forward at a small
#       step), c73 (DDP over gloo started by torch.multiprocessing.spawn, one rank slow) through the forty-fifth script's corpus branch.
export PATH=/opt/torch/.venv/bin:$PATH
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" corpus ;;
	esac ;;
corpus)
	NAMES="${NAMES:-c70_allocator_at_its_cap c71_timing_hooks_synchronize c72_compile_item_small_step c73_mp_spawn_ddp_slow_rank}" \
		LIMIT=${LIMIT:-420} sh docs/gpu-runs/2026-12-06-fortyfifth/calls.sh corpus ;;
*) echo "usage: calls.sh auto | corpus (on the device)" >&2; exit 2 ;;
esac
