#!/bin/sh
# The fifty-fourth session's device calls (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack).
#   auto (on the device): on an H200 the toggle (the fiftieth session's `auto`); on another card
#       the corpus call: c74 again with one epoch (its trace, 2.9 MB packed, the corpus's largest,
#       made room for the two below), c77 (3 s) and c79 (5 s) collected shorter than in session
#       53 (their packed traces did not fit the tree), and c81 (a weights EMA updated by a Python
#       loop over the parameters), written before its trace.
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	case $gpu in
	*H200*) sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto ;;
	*) NAMES="${NAMES:-c74_accelerate_accumulate_gather_item c77_optimizer_foreach_off c79_nanogpt_memmap c81_ema_param_loop}" \
		sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus ;;
	esac ;;
*) echo "usage: calls.sh auto (on the device)" >&2; exit 2 ;;
esac
