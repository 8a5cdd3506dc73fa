#!/bin/sh
# device call 4 (twelfth session): the stack budget's reserve on a cold machine.  The page
# cache is dropped before each run, so libunwind reads the unwind tables from disk as in a
# job's first run: the new reserve (20 x the credit, at most 100 ms) against cf38807 (none).
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
. tests/bench/inplace_lib.sh
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
{
cold; inplace new_cold1 $D/libingero_preload.so
cold; inplace old_cold $D/old/libingero_preload.so
cold; inplace new_cold2 $D/libingero_preload.so
inplace new_warm $D/libingero_preload.so
} > $R/inplace.txt 2>&1
echo "done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
