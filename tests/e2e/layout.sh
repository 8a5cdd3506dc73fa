#!/bin/sh
# The source tree's shape, checked (issue 38): analyzer/ is a pipeline of
# stage folders whose includes point one way — base <- load <- measure <-
# rules <- render <- front ends (cli, mcp, gate) — with no include circle
# between modules (x.c and x.h are one module), and no product file is
# longer than 800 lines.  (One awk over all the files: a process a file and
# an include cost ~15 CPU-seconds on the 2-CPU VM.)
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

# every analyzer source sits in a stage folder (main.c, the entry, at the top)
strays=$(find analyzer -maxdepth 1 -name '*.[ch]' ! -name main.c | tr '\n' ' ')
check_eq "analyzer: every source file in a stage folder" "" "$strays"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
find analyzer -mindepth 2 -name '*.[ch]' | sort >"$T/files"
# each module's includes ("MODULE INCLUDE" lines, a module with itself too),
# stage folders not in the pipeline ("unknown S") and includes that point up
# or across front ends ("bad FILE->INCLUDE")
# shellcheck disable=SC2046
awk '
function rank(s) {
	if (s == "base") return 0; if (s == "load") return 1; if (s == "measure") return 2
	if (s == "rules") return 3; if (s == "render") return 4
	if (s == "cli" || s == "mcp" || s == "gate") return 5
	return 9
}
# x_internal.h is module x own header, shared by the files of x
function module(path,   p, n, b) {
	n = split(path, p, "/"); b = p[n]
	sub(/\.[ch]$/, "", b); sub(/_internal$/, "", b)
	return p[2] "/" b
}
FNR == 1 {
	split(FILENAME, p, "/"); s = p[2]; m = module(FILENAME)
	print "edge", m, m
	if (rank(s) == 9 && !(s in told)) { told[s] = 1; print "unknown", s }
}
/^#include "[a-z]*\/[a-z_0-9]*\.h"/ {
	inc = $0; sub(/^#include "/, "", inc); sub(/\.h".*/, "", inc); sub(/_internal$/, "", inc)
	if (inc == m) next
	print "edge", m, inc
	split(inc, q, "/"); t = q[1]
	rs = rank(s); rt = rank(t)
	if (rt > rs || (rs == 5 && rt == 5 && s != t)) print "bad", FILENAME "->" inc
}' $(cat "$T/files") >"$T/out"
unknown=$(awk '$1 == "unknown" { printf "%s ", $2 }' "$T/out")
check_eq "analyzer: only the known stage folders" "" "$unknown"
bad=$(awk '$1 == "bad" { printf " %s", $2 }' "$T/out")
check_eq "analyzer: includes point down the pipeline (base <- load <- measure <- rules <- render <- cli|mcp|gate)" "" "$bad"
check_ge "analyzer: include edges read" "$(grep -c '^edge ' "$T/out")" 300
# tsort names every module on a loop (on stderr) and exits non-zero
loops=$(awk '$1 == "edge" { print $2, $3 }' "$T/out" | tsort 2>&1 >/dev/null |
	grep -v 'input contains a loop' | sed 's/^tsort: //' | tr '\n' ' ')
check_eq "analyzer: no include circle between modules" "" "$loops"

# shellcheck disable=SC2046
long=$(wc -l $(find analyzer preload collector common bpf include -name '*.[ch]' | sort) |
	awk '$2 != "total" && $1 > 800 { printf " %s:%d", $2, $1 }')
check_eq "no product source file over 800 lines" "" "$long"

# The tree travels to the GPU machine whole, with the pack of products the
# device calls carry (.devpack, ~2.4 MB), under 64 MiB in all — counted as
# a tar of the files (a header and padding each: ~0.8 MB over their bytes
# for ~1,000 files; a call of the fifty-fourth session was refused with
# 64.3 MB of bytes, 65.1 MB as a tar): the tracked files' tar stays under
# 61.6 MiB (the corpus is most of it: c77 and c79 wait in pending/ for want
# of room, docs/gpu-runs.md sections 53 and 54)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	bytes=$(git ls-files -z | tar -cf - --null --no-recursion -T - | wc -c)
	check "the tracked tree as a tar under 61.6 MiB ($bytes bytes)" \
		test "$bytes" -gt 1000000 -a "$bytes" -le $((616 * 1024 * 1024 / 10))
else
	skip "tree size: not a git checkout"
fi
finish
