#!/bin/sh
# device call 3 (thirteenth session): the twelve corpus workloads traced by this session's
# build (44f94b7), collect.sh as shipped in ../shared/corpus (carried in .devbin/corpus)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/c; mkdir -p $R
UNTRACED=0 timeout 500 bash $D/corpus/collect.sh $D $R
echo "collect done $(date +%T)"
cd $OUT && tar czf c1.tgz c/c0[1-6]* && tar czf c2.tgz c/c0[7-9]* c/c1* && rm -rf c && ls -la
