#!/bin/sh
# analyzer_corrupt.sh — a report.db with a corrupted page: every subcommand
# either prints exactly what it prints on the sound file, or exits non-zero
# with one line that says the file is corrupted — never exit 0 with other
# output (issue 14, item 4: a page of stack_frames, and 27 others, went by
# unnoticed because step loops took an error for the end of the rows).
#
# The file is a real trace (examples/small_check_h200.db.xz).  For every
# b-tree of it (tables and indexes, found with the dbstat virtual table),
# its first, middle and last pages are overwritten in turn with a fixed
# byte: an invalid page type, which SQLite always detects when it reads the
# page, so the outcome is the same on every machine.  Overflow pages hold
# only the tail of a value (no header SQLite could check): overwriting one
# changes a value unseen, so those are held only to "no crash, at most one
# line".  Call blocks whose `calls` column is out of range are named.
# tests/run: pool (no clock it asserts on: run beside another test)
# tests/run: first (one of the pool's longest: started before the rest of it)
. tests/lib.sh

A=$B/ingero-analyze
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
SRC=$B/examples/small_check_h200.db
psize=$(sqlite3 "$SRC" "PRAGMA page_size")
cp "$SRC" "$T/sound.db"
cmds="explain|explain --json|stats --json|per-process --json|timeline --json|timeline|export --format perfetto -o OUT|report --html -o OUT|gate --json $T/sound.db"

# (the loops below run ~600 analyses: each costs its own process only — a
# fork costs ~4 ms of CPU on the 2-CPU VM, and a subshell, sed, wc and grep
# an analysis had made this test's forks most of its time)
run() { # db cmd outfile-prefix: stdout (or -o file) into PREFIX.out, stderr into PREFIX.err; sets rc
	_c=$2
	case $_c in *OUT*) _c="${_c%%OUT*}$3.file${_c#*OUT}" ;; esac
	# shellcheck disable=SC2086
	"$A" $_c "$1" >"$3.out" 2>"$3.err"
	rc=$?
	if [ -f "$3.file" ]; then cat "$3.file" >>"$3.out" && rm -f "$3.file"; fi
}
# one_line FILE: true when FILE holds exactly one line; its line in $line
one_line() { { IFS= read -r line && ! read -r _more; } <"$1"; }

# the sound file at the path the corrupted copies will have (the HTML
# report names its file)
cp "$SRC" "$T/c.db"
i=0
IFS='|'
for c in $cmds; do
	i=$((i + 1))
	unset IFS
	run "$T/c.db" "$c" "$T/base$i"
	check_eq "sound file: $c exits 0" 0 "$rc"
	IFS='|'
done
unset IFS

corrupt() { # page: a copy of the file with that page overwritten (on page 1,
	# after the file header: its b-tree page starts at byte 100)
	cp "$SRC" "$T/c.db"
	skip=0
	[ "$1" -eq 1 ] && skip=100
	head -c $((psize - skip)) /dev/zero | tr '\0' '\132' |
		dd of="$T/c.db" bs=1 seek=$((($1 - 1) * psize + skip)) conv=notrunc 2>/dev/null
}

# first, middle and last b-tree page of each table and index, and two more
# of the big ones
sqlite3 -separator ' ' "$SRC" "
	WITH p AS (SELECT name, pageno, row_number() OVER (PARTITION BY name ORDER BY pageno) AS k,
	                  count(*) OVER (PARTITION BY name) AS n
	           FROM dbstat WHERE pagetype != 'overflow')
	SELECT name, pageno FROM p WHERE k IN (1, n, (n + 1) / 2, (n + 3) / 4, (3 * n + 3) / 4)
	ORDER BY name, pageno" >"$T/pages"
check_ge "b-trees' pages to corrupt" "$(wc -l <"$T/pages")" 30
silent=0 named=0 same=0
while read -r name page; do
	corrupt "$page"
	i=0
	IFS='|'
	for c in $cmds; do
		i=$((i + 1))
		unset IFS
		run "$T/c.db" "$c" "$T/x"
		if [ "$rc" -eq 0 ]; then
			if cmp -s "$T/x.out" "$T/base$i.out" && [ ! -s "$T/x.err" ]; then
				same=$((same + 1))
			else
				silent=$((silent + 1))
				nok "page $page ($name): $c exits 0 with other output"
				diff "$T/base$i.out" "$T/x.out" | head -n 6 | sed 's/^/# /'
				head -c 300 "$T/x.err" | sed 's/^/# stderr: /'
			fi
		elif [ "$rc" -eq 3 ] && one_line "$T/x.err" &&
			{ [ ! -s "$T/x.out" ] || [ "$c" = timeline ]; } &&   # text timeline streams its lines
			case $line in "ingero-analyze: "*" is corrupted: "* | "ingero-gate: "*" is corrupted: "*) true ;;
			*) false ;; esac; then
			named=$((named + 1))
		else
			nok "page $page ($name): $c exits $rc, $(wc -l <"$T/x.err") stderr lines: $(head -c 200 "$T/x.err")"
		fi
		IFS='|'
	done
	unset IFS
done <"$T/pages"
check_eq "no subcommand exits 0 with changed output on a corrupted page" 0 "$silent"
check_ge "corruption was met and named (one line, exit 3: bad input)" "$named" 50
echo "# $same runs unchanged, $named named the corruption"

# overflow pages: a value's tail changes unseen; no crash, at most one line
sqlite3 "$SRC" "SELECT pageno FROM dbstat WHERE pagetype = 'overflow' ORDER BY pageno" >"$T/ovfl"
bad=0
while read -r page; do
	corrupt "$page"
	for c in explain "stats --json" "timeline --json"; do
		# shellcheck disable=SC2086
		"$A" $c "$T/c.db" >/dev/null 2>"$T/x.err"
		rc=$?
		if [ "$rc" -ge 128 ] || { [ -s "$T/x.err" ] && ! one_line "$T/x.err"; }; then
			bad=$((bad + 1))
			nok "overflow page $page: $c exits $rc: $(head -c 200 "$T/x.err")"
		fi
	done
done <"$T/ovfl"
check_eq "overflow pages overwritten: no crash, at most one line" 0 "$bad"

# call_blocks.calls out of range (the blob is sound): named, not "out of memory"
for calls in 0 -1 1025 2147483647 9223372036854775807; do
	cp "$SRC" "$T/c.db"
	id=$(sqlite3 "$T/c.db" "SELECT min(id) FROM call_blocks")
	sqlite3 "$T/c.db" "UPDATE call_blocks SET calls = $calls WHERE id = $id"
	"$A" stats "$T/c.db" >/dev/null 2>"$T/x.err"
	rc=$?
	if [ "$rc" -eq 3 ] && grep -q "is corrupted: call block $id: " "$T/x.err" && [ "$(wc -l <"$T/x.err")" -eq 1 ]; then
		ok "calls = $calls: exit 3, names call block $id"
	else
		nok "calls = $calls: exit $rc: $(head -c 200 "$T/x.err")"
	fi
done
finish
