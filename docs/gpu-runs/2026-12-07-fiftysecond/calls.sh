#!/bin/sh
# The fifty-second session's device calls.  The bundle is the fiftieth session's stripped pack
# (`make bundle && sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack);
# collect.sh (/work/shared/corpus/, copied here as collect.sh's twin is not in the tree) runs the
# tree's own workloads.
#   corpus (on the device): four classes written before their traces (tests/corpus/pending/):
#       c77 (AdamW(foreach=False): the optimizer's per-parameter launches), c78 (shards torch.load'ed
#       by the main thread between their steps), c79 (nanoGPT's GPT-2 small, healthy), c80 (three
#       sweep processes sharing the GPU); untraced then traced; per trace its run lines, the
#       verdict, the first finding and its root cause; every file in one tarball.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
corpus)
	mkdir -p $D/corpus /tmp/tr && tar xJf .devpack/devbin.txz -C $D && cp docs/gpu-runs/2026-12-07-fiftysecond/collect.sh $D/corpus/ &&
	ln -sfn $PWD/tests/corpus/workloads $D/corpus/workloads || exit 1
	nvidia-smi --query-gpu=name --format=csv,noheader; nproc
	set -- ${NAMES:-c77_optimizer_foreach_off c78_shard_load_main c79_nanogpt_memmap c80_sweep_three_procs}
	timeout ${LIMIT:-420} bash $D/corpus/collect.sh $D /tmp/tr "$@" 2>&1 | tail -5
	for n in "$@"; do
		echo "== $n: $(tr '\n' ' ' < /tmp/tr/$n.run.txt)"
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -m1 -A8 'Root cause' /tmp/tr/$n.explain.txt | cut -c1-400
	done
	tar -C /tmp/tr -cf $OUT/corpus.tar . ;;
*) echo "usage: calls.sh corpus (on the device)" >&2; exit 2 ;;
esac
