#!/bin/sh
# The fifty-fourth session's device calls (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack).
#   auto (on the device): on an H200 the toggle (the fiftieth session's `auto`); on another card
#       the corpus call: c74 again with one epoch (its trace, 2.9 MB packed, the corpus's largest,
#       made room for the two below), c77 (3 s) and c79 (5 s) collected shorter than in session
#       53 (their packed traces did not fit the tree), and c81 (a weights EMA updated by a Python
#       loop over the parameters), written before its trace.
#   truth (on the device): c77's and c81's kernels as the GPU counts them (truth.py: CUPTI through
#       torch.profiler), then both traced: the analyzer's device compute a step against it.
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	case $gpu in
	*H200*) sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto ;;
	*) NAMES="${NAMES:-c74_accelerate_accumulate_gather_item c77_optimizer_foreach_off c79_nanogpt_memmap c81_ema_param_loop}" \
		sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus ;;
	esac ;;
truth)
	# the GPU's own account (CUPTI through torch.profiler) of c77's and c81's kernels, then each
	# traced as the corpus collects it, on the same machine: the analyzer's per-step device
	# compute against the kernels' summed time a step
	export PATH=/opt/torch/.venv/bin:$PATH
	nvidia-smi --query-gpu=name --format=csv,noheader
	cd tests/corpus/workloads && for n in ${NAMES:-c77_optimizer_foreach_off c81_ema_param_loop}; do
		timeout 150 python3 ../../../docs/gpu-runs/2026-12-07-fiftyfourth/truth.py $n.py 2>&1 | tail -12
	done; cd ../../..
	NAMES="${NAMES:-c77_optimizer_foreach_off c81_ema_param_loop}" sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus ;;
*) echo "usage: calls.sh auto | truth (on the device)" >&2; exit 2 ;;
esac
