#!/bin/sh
# device call 2 (fifteenth session): c13 (its workload fixed: the gradients dropped before
# empty_cache) and the five new corpus workloads c21-c28 traced by main e1c5d89 (the preload as
# cca7090's); then c14 (a 64 MiB checkpoint fsync'ed every 10 steps) untraced and traced in turn,
# three times each: what the tracer costs a job that writes to storage.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
t0=$(date +%s)
R=/tmp/c3; mkdir -p $R
UNTRACED=0 timeout 360 bash $D/corpus/collect.sh $D $R c13_empty_cache_step c21_item_every_step c22_prefetch_pinned_streams c23_workers_keep_up c24_no_caching_allocator c25_requests_sleep c26_batch1_inference c27_tensor_dataset_main c28_many_small_copies
echo "collect done after $(( $(date +%s) - t0 )) s"
cat $R/*.run.txt
cd $D/corpus/workloads
for i in 1 2 3; do
	echo "untraced $i: $(timeout 60 python3 c14_checkpoint_fsync.py 2>&1 | tail -n 1)"
	echo "traced $i: $(timeout 60 $D/ingero-run -q -o /tmp/c14.$i.db -- python3 c14_checkpoint_fsync.py 2>&1 | grep -v '^ingero' | tail -n 1)"
done | tee $R/c14_ab.txt
$D/ingero-analyze stats /tmp/c14.3.db > $R/c14_ab_stats.txt 2>&1
echo "all done after $(( $(date +%s) - t0 )) s"
cd /tmp && tar cf $OUT/c3.tar c3
