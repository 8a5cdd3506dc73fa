#!/bin/sh
# The forty-fourth session's device calls (the bundle of this session's main, packed by `make bundle &&
# sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, carried as .devpack; preload, BPF and
# collector unchanged since 0e7e5b9, the per-call path since cbc922b).
#   auto: on an H200, the toggle (docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle with
#       TURNS=full CHUNKS=1100 PROCS=9); on another card, `corpus` below.
#   corpus: the two new classes through collect.sh, untraced then traced — c52 (DDP over gloo, rank
#       1's sequences four times rank 0's) and c53 (a CPU embedding table with dense gradients); their
#       expectations were committed first.  Per trace its run lines, the verdict, the first finding
#       and its root cause; every file in one tarball.  NAMES= picks other workloads.
#   auto2: as auto, with c54 (a sync inside boolean-mask indexing) and c55 (the model left on the
#       CPU) on another card.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh "$0" corpus ;;
	esac ;;
auto2)	# (the second call: on an H200 the toggle, else c54 — a sync inside boolean-mask indexing)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=9 LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) NAMES="c54_mask_index_sync c55_model_left_on_cpu" sh "$0" corpus ;;
	esac ;;
corpus)
	mkdir -p .devbin /tmp/tr && tar xJf .devpack/devbin.txz -C .devbin
	set -- ${NAMES:-c52_ddp_gloo_uneven_lengths c53_cpu_embedding_dense_grad}
	timeout ${LIMIT:-400} bash $D/corpus/collect.sh $D /tmp/tr "$@" 2>&1 | tail -4
	for n in "$@"; do
		echo "== $n: $(tr '\n' ' ' < /tmp/tr/$n.run.txt)"
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -m1 -A8 'Root cause' /tmp/tr/$n.explain.txt | cut -c1-400
	done
	tar -C /tmp/tr -cf $OUT/corpus.tar . ;;
*) echo "usage: calls.sh auto | auto2 | corpus (on the device)" >&2; exit 2 ;;
esac
