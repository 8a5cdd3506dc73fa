#!/bin/sh
# analyzer_frames.sh — frames stored once (schema version 8) read as the old
# rows were: real traces of the corpus (schema 7 and older: a row of
# stack_frames per frame of every stack) converted to version 8's layout
# (tests/helpers/frames_v8.sql: each distinct frame once in frames, a
# stack's frames as lists of ids, stack_frames a view) give the same view
# rows as the old table, in the same order, and byte-identical output from
# every reader of stacks — explain (stack names), per-process (roles from
# samples' frames), stacks on-CPU and --offcpu (whole frame lists), MCP
# get_stacks — while the file shrinks.  The converter's view is the
# schema's own (checked against a file gen_reportdb makes), and so is
# tests/corpus/unpack.sh's (the layout the other corpus tests read).
# Two small traces of schema 7 (IPC unpickling, GC): c07 and c37 (20 and
# 13 MB) had taken 19 CPU-seconds of make check for the same checks.
# tests/run: pool (no clock it asserts on: run beside another test)
# tests/run: first (one of the pool's longest: started before the rest of it)
. "$(dirname "$0")/../lib.sh"
A=$B/ingero-analyze
command -v xz >/dev/null || { skip "frames: xz missing"; finish; }
command -v python3 >/dev/null || { skip "frames: python3 missing"; finish; }
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

"$B/tests/gen_reportdb" healthy "$T/gen.db" >/dev/null 2>&1 || nok "gen_reportdb healthy"
view_sql() { sqlite3 "$1" "SELECT sql FROM sqlite_master WHERE name = 'stack_frames'"; }

# outputs DB PREFIX: every view that reads stacks
outputs() {
	"$A" explain --json "$1" >"$2.explain.json" 2>&1
	"$A" explain --width 120 "$1" >"$2.explain.txt" 2>&1
	"$A" per-process --json "$1" >"$2.pp.json" 2>&1
	"$A" stacks "$1" >"$2.on.folded" 2>&1
	"$A" stacks --offcpu "$1" >"$2.off.folded" 2>&1
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_stacks","arguments":{"limit":20}}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_stacks","arguments":{"api":"cudaStreamSynchronize","limit":5}}}' |
		"$A" mcp "$1" >"$2.mcp" 2>/dev/null
}

for n in c44_unpickle_ipc c43_gc_many_objects; do
	x=tests/corpus/$n.db.xz
	[ -f "$x" ] || { skip "$n: not in the corpus"; continue; }
	sh tests/corpus/unpack.sh --rows "$x" "$T/v7.db" || { nok "unpack $n"; continue; }
	sqlite3 "$T/v7.db" VACUUM
	cp "$T/v7.db" "$T/v8.db"
	sqlite3 -bail "$T/v8.db" <tests/helpers/frames_v8.sql >/dev/null
	check_eq "$n: converted (frames table, stack_frames a view)" "table view" \
		"$(sqlite3 "$T/v8.db" "SELECT (SELECT type FROM sqlite_master WHERE name = 'frames') || ' ' ||
			(SELECT type FROM sqlite_master WHERE name = 'stack_frames')")"
	check_eq "$n: the converter's view is the schema's" "$(view_sql "$T/gen.db")" "$(view_sql "$T/v8.db")"
	sqlite3 "$T/v7.db" "SELECT * FROM stack_frames" >"$T/rows7"
	sqlite3 "$T/v8.db" "SELECT * FROM stack_frames" >"$T/rows8"
	check_ge "$n: has stack frames" "$(wc -l <"$T/rows7")" 1000
	check "$n: the view's rows are the old table's, in its order" cmp -s "$T/rows7" "$T/rows8"
	check_eq "$n: each distinct frame once" "$(sqlite3 "$T/v8.db" "SELECT count(*) FROM frames")" \
		"$(sqlite3 "$T/v7.db" "SELECT count(*) FROM (SELECT DISTINCT kind, ip, symbol, module, offset, file, line
			FROM stack_frames)")"
	# the corpus's own unpacking (the layout every other test reads) is
	# the converter's, frame ids and lists alike
	# (corpus_db, lib.sh: the copy unpack.sh made for every test, once)
	u=$(corpus_db "$x" "$T/u.db") || nok "unpack $n as schema 8 stores frames"
	for tb in frames stacks; do
		check "$n: unpack.sh's $tb are the converter's" \
			test "$(sqlite3 "$u" "SELECT * FROM $tb" | md5sum)" = "$(sqlite3 "$T/v8.db" "SELECT * FROM $tb" | md5sum)"
	done
	check_eq "$n: unpack.sh's view is the schema's" "$(view_sql "$T/gen.db")" "$(view_sql "$u")"
	rm -f "$T/u.db"
	s7=$(wc -c <"$T/v7.db"); s8=$(wc -c <"$T/v8.db")
	check "$n: the file shrinks ($s7 -> $s8 bytes)" test "$s8" -lt "$s7"
	outputs "$T/v7.db" "$T/a"
	outputs "$T/v8.db" "$T/b"
	for o in explain.json explain.txt pp.json on.folded off.folded mcp; do
		check "$n: $o identical" cmp -s "$T/a.$o" "$T/b.$o"
	done
	check_ge "$n: folded stacks read" "$(wc -l <"$T/b.on.folded")" 10
	check "$n: get_stacks gave frames" grep -q '\\"native\\":\[{' "$T/b.mcp"
done

# a list that is not one: the reader says which stack, exit 3 (the file's fault)
if [ -f "$T/v8.db" ]; then
	sqlite3 "$T/v8.db" "UPDATE stacks SET python = '[1,' WHERE python IS NOT NULL"
	"$A" explain --json "$T/v8.db" >/dev/null 2>"$T/bad.err"
	check_eq "a damaged list: exit 3" 3 $?
	check "... naming the list" grep -q "is corrupted: stacks.python of stack .* is not a list of frame ids" "$T/bad.err"
fi
finish
