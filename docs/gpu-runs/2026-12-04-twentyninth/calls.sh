#!/bin/sh
# The twenty-ninth session's device calls.  Run on the device from the repository root, the bundle
# unpacked into .devbin from .devpack/devbin.txz (made here by pack-bundle below: build/bundle plus
# /work/shared/corpus/collect.sh and every workload, shared and tests/corpus/workloads/).
#   43: issue 43's new classes through collect.sh (untraced, then traced): c42 (a fresh 256 MiB host
#       buffer every step), c43 (GC with millions of live objects), c44 (unpickling-heavy DataLoader
#       IPC), c45 (six big batches), c46 (a short CuPy steady state); their expectations were
#       committed first (expectations/).  Per trace: the first finding, its root cause and fixes.
#   43b: c43 again (the sampler now names CPython's collector: the <gc> frame), c45 and c46 again
#       (call 1's traces of them did not come back), traced only (UNTRACED=0), everything in one
#       tarball (the device tool brings back a few files only)
#   pack-bundle (here, not on the device): .devpack/devbin.txz
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
pack-bundle)
	rm -rf /tmp/devbin && cp -r build/bundle /tmp/devbin && mkdir -p /tmp/devbin/corpus/workloads &&
	cp /work/shared/corpus/collect.sh /tmp/devbin/corpus/ &&
	cp /work/shared/corpus/workloads/*.py tests/corpus/workloads/*.py /tmp/devbin/corpus/workloads/ &&
	mkdir -p .devpack && tar -C /tmp/devbin -cJf .devpack/devbin.txz . && ls -la .devpack ;;
43)	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	nproc; python3 -c 'import sys, gc; print(sys.version); print(gc.get_threshold())'
	timeout 480 bash $D/corpus/collect.sh $D /tmp/tr c42_fresh_host_buffer c43_gc_many_objects c44_unpickle_ipc \
		c45_few_big_batches c46_cupy_short_host_loop 2>&1 | tail -6
	for n in c42_fresh_host_buffer c43_gc_many_objects c44_unpickle_ipc c45_few_big_batches c46_cupy_short_host_loop; do
		echo "== $n: $(tr '\n' ' ' < /tmp/tr/$n.run.txt)"
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -m1 'Root cause' /tmp/tr/$n.explain.txt | cut -c1-600
	done
	cp /tmp/tr/*.db.xz /tmp/tr/*.explain.txt /tmp/tr/*.run.txt $OUT/ 2>/dev/null ;;
43b)	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	UNTRACED=0 timeout 200 bash $D/corpus/collect.sh $D /tmp/tr c43_gc_many_objects c45_few_big_batches \
		c46_cupy_short_host_loop 2>&1 | tail -4
	for n in c43_gc_many_objects c45_few_big_batches c46_cupy_short_host_loop; do
		echo "== $n: $(tr '\n' ' ' < /tmp/tr/$n.run.txt)"
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -m1 -A6 'Root cause' /tmp/tr/$n.explain.txt | cut -c1-300
	done
	tar -C /tmp/tr -cf $OUT/43b.tar . ;;
*) echo "usage: calls.sh pack-bundle (here) | 43 | 43b (on the device)" >&2; exit 2 ;;
esac
