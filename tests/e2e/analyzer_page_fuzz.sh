#!/bin/sh
# analyzer_page_fuzz.sh — a real trace with a span of one page overwritten
# (issue 40, item 5): explain and stats either print exactly what they
# print on the sound file, or exit 3 with one line naming the table that
# is damaged — never exit 0 with other numbers (before: zeroing 256 bytes
# of an off_cpu leaf gave "2527 s of evidence" for 13.5 s and a pid 0,
# exit 0; 4 of 40 random overwrites changed the numbers silently).
#
# The trace is examples/small_check_h200.db (the H200); the pages are the
# b-tree pages (tables and indexes) of the tables the analysis reads
# whole or by time, which ingero-analyze checks as it loads them
# (analyzer/load/check.c); a span of 256 bytes at a place drawn from the
# seed (tests/helpers/page_fuzz.c), zeros or pseudo-random bytes.  Not
# here: stack_frames (read by stack id; SQLite checks each page it reads)
# and overflow pages (a blob's tail, no structure to check: a call
# block's decoder and its row's bounds catch most changes, not all).
# FUZZ_SEEDS (default 32) seeds, 1 to N.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

A=$B/ingero-analyze
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
SRC=$B/examples/small_check_h200.db
SEEDS=${FUZZ_SEEDS:-32}
psize=$(sqlite3 "$SRC" "PRAGMA page_size")
pages=$(sqlite3 "$SRC" "SELECT d.pageno FROM dbstat d JOIN sqlite_master m ON m.name = d.name
	WHERE d.pagetype != 'overflow' AND m.tbl_name IN ('session', 'apis', 'processes', 'threads',
	'losses', 'capture', 'call_blocks', 'off_cpu', 'off_cpu_stacks', 'cpu_samples', 'cpu_busy',
	'page_allocs', 'competitors', 'gpu_marks', 'kernels', 'stacks') ORDER BY d.pageno" | tr '\n' ' ')
check_ge "pages to overwrite" "$(echo "$pages" | wc -w)" 30
cmds="explain|stats --json"

run() { # db cmd prefix
	# shellcheck disable=SC2086
	"$A" $2 "$1" >"$3.out" 2>"$3.err"
	echo $?
}
i=0
IFS='|'
for c in $cmds; do
	i=$((i + 1))
	unset IFS
	check_eq "sound file: $c exits 0" 0 "$(run "$SRC" "$c" "$T/base$i")"
	IFS='|'
done
unset IFS

same=0 named=0 silent=0 seed=0
while [ "$seed" -lt "$SEEDS" ]; do
	seed=$((seed + 1))
	cp "$SRC" "$T/c.db"
	# shellcheck disable=SC2086
	where=$("$B/tests/page_fuzz" "$T/c.db" "$seed" "$psize" $pages)
	i=0
	IFS='|'
	for c in $cmds; do
		i=$((i + 1))
		unset IFS
		rc=$(run "$T/c.db" "$c" "$T/x")
		if [ "$rc" -eq 0 ] && cmp -s "$T/x.out" "$T/base$i.out" && [ ! -s "$T/x.err" ]; then
			same=$((same + 1))
		elif [ "$rc" -eq 3 ] && [ "$(wc -l <"$T/x.err")" -eq 1 ] &&
			grep -Eq "^ingero-analyze: .* is corrupted: " "$T/x.err"; then
			named=$((named + 1))
		else
			silent=$((silent + 1))
			nok "seed $seed ($where): $c exits $rc: $(head -c 200 "$T/x.err")"
			diff "$T/base$i.out" "$T/x.out" | head -n 4 | sed 's/^/# /'
		fi
		IFS='|'
	done
	unset IFS
done
check_eq "no run exits 0 with other output, or fails otherwise" 0 "$silent"
check_ge "damage met and refused (exit 3, one line)" "$named" 8
echo "# $same runs unchanged, $named refused"
finish
