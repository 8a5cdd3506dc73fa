#!/bin/sh
# The source tree's shape, checked (issue 38): analyzer/ is a pipeline of
# stage folders whose includes point one way — base <- load <- measure <-
# rules <- render <- front ends (cli, mcp, gate) — with no include circle
# between modules (x.c and x.h are one module), and no product file is
# longer than 800 lines.
# tests/run: pool (no clock it asserts on: run beside another test)
# tests/run: first (one of the pool's longest: started before the rest of it)
. tests/lib.sh

rank() {
	case $1 in
	base) echo 0 ;; load) echo 1 ;; measure) echo 2 ;; rules) echo 3 ;; render) echo 4 ;;
	cli | mcp | gate) echo 5 ;; *) echo 9 ;;
	esac
}

# every analyzer source sits in a stage folder (main.c, the entry, at the top)
strays=$(find analyzer -maxdepth 1 -name '*.[ch]' ! -name main.c | tr '\n' ' ')
check_eq "analyzer: every source file in a stage folder" "" "$strays"
unknown=$(find analyzer -mindepth 2 -name '*.[ch]' | cut -d/ -f2 | sort -u | while read -r s; do
	[ "$(rank "$s")" = 9 ] && printf '%s ' "$s"; done)
check_eq "analyzer: only the known stage folders" "" "$unknown"

# includes point down the pipeline; a front end never includes another's
edges=$(mktemp)
bad=""
for f in $(find analyzer -mindepth 2 -name '*.[ch]' | sort); do
	s=$(echo "$f" | cut -d/ -f2)
	# x_internal.h is module x's own header, shared by the files of x
	m=$s/$(basename "$f" | sed 's/\.[ch]$//; s/_internal$//')
	echo "$m $m" >>"$edges"
	for inc in $(sed -n 's|^#include "\([a-z]*/[a-z_0-9]*\)\.h".*|\1|p' "$f" | sed 's/_internal$//'); do
		t=${inc%%/*}
		[ "$inc" = "$m" ] && continue
		echo "$m $inc" >>"$edges"
		rs=$(rank "$s"); rt=$(rank "$t")
		if [ "$rt" -gt "$rs" ] || { [ "$rs" -eq 5 ] && [ "$rt" -eq 5 ] && [ "$s" != "$t" ]; }; then
			bad="$bad $f->$inc"
		fi
	done
done
check_eq "analyzer: includes point down the pipeline (base <- load <- measure <- rules <- render <- cli|mcp|gate)" "" "$bad"
# tsort names every module on a loop (on stderr) and exits non-zero
loops=$(tsort "$edges" 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //' | tr '\n' ' ')
check_eq "analyzer: no include circle between modules" "" "$loops"
rm -f "$edges"

long=""
for f in $(find analyzer preload collector common bpf include -name '*.[ch]' | sort); do
	n=$(wc -l <"$f")
	[ "$n" -gt 800 ] && long="$long $f:$n"
done
check_eq "no product source file over 800 lines" "" "$long"
finish
