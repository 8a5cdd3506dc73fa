#!/bin/sh
# device call 5 (twelfth session): in place, the build whose threads without Python frames
# take 1 in 16 of their launch samples (autograd's backward thread)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
R=$OUT/r; mkdir -p $R
inplace() { # tag lib extra-env...
	tag=$1; lib=$2; shift 2
	env INGERO_PRELOAD=$lib INGERO_SELF_TIME=1 INGERO_CAPTURE=cudaProfilerApi "$@" $D/ingero-run -q -o /tmp/$tag.db -- \
		python3 examples/train_overhead.py --steps 30 --chunks 100 --toggle 2>&1 | grep '^ingero:' | sed "s/^/$tag /"
	$D/ingero-analyze stats /tmp/$tag.db 2>/dev/null | grep -iE "^Call stacks" | sed "s/^/$tag /"
	rm -f /tmp/$tag.db*
}
{
inplace warm $D/libingero_preload.so
inplace new1 $D/libingero_preload.so
inplace new2 $D/libingero_preload.so
} > $R/inplace.txt 2>&1
echo "done $(date +%T)"
cd $OUT && tar czf r.tgz r && rm -rf r
