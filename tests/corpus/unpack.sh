#!/bin/sh
# tests/corpus/unpack.sh IN.db.xz OUT.db — a corpus trace as the collector
# wrote it: unpacked, stack_frames filled again from pack.sh's frame table
# (schema 7 and older; a schema 8 file keeps its frames as they are), and
# the indexes pack.sh dropped built again (same SQL, same order), so the
# analyzer meets the same rows, schema and query plans.
set -eu
in=$1; out=$2
xz -dc "$in" >"$out.tmp"
has() { [ -n "$(sqlite3 "$out.tmp" "SELECT name FROM sqlite_master WHERE name = '$1'")" ]; }
if has corpus_indexes; then
	# the script is written whole before it runs: its reads of the file and
	# the writer must not overlap (a pipe ran them at once: "database is
	# locked" on a loaded machine)
	{ if has corpus_stack_frames; then
		echo "INSERT INTO stack_frames(stack_id, depth, kind, ip, symbol, module, offset, file, line)
			SELECT r.stack_id, r.depth, r.kind, f.ip, f.symbol, f.module, f.offset, f.file, f.line
			FROM corpus_stack_frames r JOIN corpus_frames f ON f.id = r.frame;
			DROP TABLE corpus_stack_frames; DROP TABLE corpus_frames;"
	  fi
	  sqlite3 "$out.tmp" "SELECT sql || ';' FROM corpus_indexes ORDER BY rowid"
	  echo "DROP TABLE corpus_indexes;"; } >"$out.sql"
	sqlite3 -bail "$out.tmp" <"$out.sql"
	rm -f "$out.sql"
fi
mv "$out.tmp" "$out"
