#!/bin/sh
# device call 5 (twelfth session): in place, the build whose threads without Python frames
# take 1 in 16 of their launch samples (autograd's backward thread)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
. tests/bench/inplace_lib.sh
{
inplace warm $D/libingero_preload.so
inplace new1 $D/libingero_preload.so
inplace new2 $D/libingero_preload.so
} > $R/inplace.txt 2>&1
echo "done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
