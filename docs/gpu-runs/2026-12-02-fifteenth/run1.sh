#!/bin/sh
# device call 1 (fifteenth session): the six new corpus workloads (tests/corpus/workloads, carried
# in .devbin/corpus/workloads beside ../shared/corpus's collect.sh) traced by main f3be25a; c13-c17
# (and c19: torchrun, c20: spawned DataLoader workers) also untraced (c17's loss must be the same both ways: the tracer must not disturb a CUDA-graph
# capture), c18 traced only (a second compile would find Inductor's cache warm)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
t0=$(date +%s)
R=$OUT/c; mkdir -p $R
df -h $D/corpus/workloads | tail -n 1 > $R/disk.txt; grep -E " $(df --output=target $D/corpus/workloads | tail -n 1) " /proc/mounts >> $R/disk.txt
UNTRACED=1 timeout 420 bash $D/corpus/collect.sh $D $R c13_empty_cache_step c14_checkpoint_fsync c15_amp_gradscaler c16_pageable_h2d c17_cuda_graph_replay c19_torchrun_single c20_loader_spawn_workers
echo "collect c13-c17, c19, c20 done after $(( $(date +%s) - t0 )) s"
UNTRACED=0 timeout 200 bash $D/corpus/collect.sh $D $R c18_compile_cudagraphs
echo "collect c18 done after $(( $(date +%s) - t0 )) s"
for f in $R/*.traced.txt; do echo "== $f"; tail -n 5 $f; done
cat $R/*.run.txt
ls -la $R
