#!/bin/sh
# device call 4 (thirteenth session): five corpus workloads re-collected with the ration in
# runs (the build after 44f94b7's corpus showed kernels late in the step never timed alone)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/c; mkdir -p $R
UNTRACED=0 timeout 170 bash $D/corpus/collect.sh $D $R c10_contended_loop c05_python_lists c01_cnn_workers2 c09_cupy_batched_fft c07_compile_dynamic
echo "collect done $(date +%T)"
cd $OUT && tar czf c3.tgz c && rm -rf c && ls -la
