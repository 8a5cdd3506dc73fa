#!/bin/sh
# The forty-fifth session's device calls (the bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack; preload, BPF and
# collector unchanged since 0e7e5b9, the per-call path since cbc922b).
#   auto: on an H200, the toggle (docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle with
#       TURNS=full CHUNKS=1100 PROCS=9); on another card, `corpus` below.
#   corpus: new classes through collect.sh, untraced then traced — c56 (token-by-token generation,
#       KV cache), c57 (DataLoader head-of-line blocking), c58 (the loop inside a library Trainer),
#       c59 (validation with a host-side metric), c60 (the step bound by host-to-device copies);
#       expectations committed first. Per trace its run
#       lines, the verdict, the first finding and its root cause; every file in one tarball.  NAMES=
#       picks other workloads.  First, which training libraries the device's Python has.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" corpus ;;
	esac ;;
corpus2)	# the real libraries the device has: Lightning and the Hugging Face Trainer
	NAMES="c61_lightning_loader_main c62_hf_trainer_log_every_step" LIMIT=${LIMIT:-300} sh "$0" corpus ;;
corpus)
	python3 -c "import importlib.util as u; print('libs:', [m for m in ('transformers', 'lightning', 'pytorch_lightning', 'accelerate', 'timm', 'torchvision', 'torchaudio', 'numpy', 'datasets', 'deepspeed', 'apex') if u.find_spec(m)])"
	mkdir -p .devbin /tmp/tr && tar xJf .devpack/devbin.txz -C .devbin
	set -- ${NAMES:-c56_generate_kv_cache c57_loader_slow_sample c58_trainer_library_loop c59_eval_metric_on_host c60_h2d_copy_bound}
	timeout ${LIMIT:-480} bash $D/corpus/collect.sh $D /tmp/tr "$@" 2>&1 | tail -4
	for n in "$@"; do
		echo "== $n: $(tr '\n' ' ' < /tmp/tr/$n.run.txt)"
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -m1 -A8 'Root cause' /tmp/tr/$n.explain.txt | cut -c1-400
	done
	tar -C /tmp/tr -cf $OUT/corpus.tar . ;;
*) echo "usage: calls.sh auto | corpus | corpus2 (on the device)" >&2; exit 2 ;;
esac
