#!/bin/sh
# For the next turn (written in the nineteenth session, not yet run): the branch
# pyframes-pipelined (a remembered Python stack's key walked in two passes, so that a frame's
# dependent misses overlap) against main, in place: long runs of the H200 loop (600 chunks
# toggling, INGERO_SELF_TIME=1), interleaved, ROUNDS of each.  Its figure is the stacks line's
# "us a stack" (and the library's own ns a recorded call, of which stacks are ~35).  The bundle:
# the branch's build/libingero_preload.so copied into .devbin as libingero_preload_pp.so (the
# same folder, so that its $ORIGIN run path finds the bundle's libraries).
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/rp; rm -rf $T; mkdir -p $T
for r in $(seq 1 ${ROUNDS:-3}); do
	for lib in libingero_preload.so libingero_preload_pp.so; do
		tag=${lib%.so}.$r
		INGERO_PRELOAD=$D/$lib INGERO_SELF_TIME=1 INGERO_CAPTURE=cudaProfilerApi "$D/ingero-run" -q -o $T/$tag.db -- \
			python3 examples/train_overhead.py --steps 30 --chunks 600 --toggle >$T/$tag.chunks 2>$T/$tag.err
		echo "$tag $(grep -E '^ingero: (self time|stacks)' $T/$tag.err | sed 's/^ingero: //; s/ (pid [0-9]*)//' | tr '\n' ' ')"
		rm -f $T/$tag.db*
	done
done | tee $OUT/pyframes.txt
