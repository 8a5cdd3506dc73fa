#!/bin/sh
# device call 2 (twelfth session): in place, what the GPU marks' per-launch part costs:
# product (d9f5169), without the slot store (nostore), without the prefetch before the
# real call (nopf), marks off (nomarks), the calling threads' marks off (watchonly)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
. tests/bench/inplace_lib.sh
{
inplace warm $D/libingero_preload.so
for i in 1 2 3; do
inplace prod$i $D/libingero_preload.so
inplace nostore$i $D/nostore/libingero_preload.so
inplace nopf$i $D/nopf/libingero_preload.so
inplace nomarks$i $D/libingero_preload.so INGERO_GPU_MARKS=0
inplace watchonly$i $D/libingero_preload.so INGERO_GPU_MARK_US=0
done
} > $R/inplace.txt 2>&1
echo "inplace done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
