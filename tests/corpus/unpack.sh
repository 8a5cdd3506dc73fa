#!/bin/sh
# tests/corpus/unpack.sh [--rows] IN.db.xz OUT.db — a corpus trace ready to
# read: unpacked, the indexes pack.sh dropped built again (same SQL, same
# order), and, for schema 7 and older, its frames as the collector stores
# them now (schema 8, docs/schema.md): each distinct frame once in `frames`
# (pack.sh's frame table, its ids as tests/helpers/frames_v8.sql numbers
# them — but for c03-c05, packed earlier: the same frames, other ids), a stack's frames as lists of ids, `stack_frames` the schema's view
# — the analyzer reads the same rows either way (tests/e2e/analyzer_frames.sh
# proves it) and the lists ~1.6x faster than a row per frame.  --rows fills
# stack_frames with a row per frame of every stack again, as the collector
# of schema 7 wrote it (analyzer_frames.sh compares the two).  A schema 8
# file keeps its frames as they are.
set -eu
rows=0
[ "${1:-}" = --rows ] && { rows=1; shift; }
in=$1; out=$2
xz -dc "$in" >"$out.tmp"
has() { [ -n "$(sqlite3 "$out.tmp" "SELECT name FROM sqlite_master WHERE name = '$1'")" ]; }
if has corpus_indexes; then
	# the script is written whole before it runs: its reads of the file and
	# the writer must not overlap (a pipe ran them at once: "database is
	# locked" on a loaded machine)
	{ if has corpus_stack_frames && [ $rows = 1 ]; then
		echo "INSERT INTO stack_frames(stack_id, depth, kind, ip, symbol, module, offset, file, line)
			SELECT r.stack_id, r.depth, r.kind, f.ip, f.symbol, f.module, f.offset, f.file, f.line
			FROM corpus_stack_frames r JOIN corpus_frames f ON f.id = r.frame;
			DROP TABLE corpus_stack_frames; DROP TABLE corpus_frames;"
	  elif has corpus_stack_frames; then
		echo "BEGIN;
			CREATE TABLE frames(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, ip INTEGER, symbol TEXT, module TEXT,
				offset INTEGER, file TEXT, line INTEGER);
			INSERT INTO frames SELECT id, kind, ip, symbol, module, offset, file, line FROM corpus_frames ORDER BY id;
			CREATE TABLE stacks_v8(id INTEGER PRIMARY KEY, pid INTEGER, kernel TEXT, native TEXT, python TEXT);"
		printf 'INSERT INTO stacks_v8 SELECT s.id, s.pid'
		for k in kernel native python; do
			printf ",\n\t(SELECT '[' || group_concat(frame, ',') || ']' FROM (SELECT frame FROM corpus_stack_frames r
				WHERE r.stack_id = s.id AND r.kind = '%s' ORDER BY depth))" $k
		done
		echo " FROM stacks s;
			DROP TABLE stack_frames; DROP TABLE stacks; ALTER TABLE stacks_v8 RENAME TO stacks;
			DROP TABLE corpus_stack_frames; DROP TABLE corpus_frames;"
		# the schema's view, from the one converter that states it
		sed -n '/^CREATE VIEW stack_frames/,/;$/p' "$(dirname "$0")/../helpers/frames_v8.sql"
		echo "COMMIT;"
	  fi
	  sqlite3 "$out.tmp" "SELECT sql || ';' FROM corpus_indexes ORDER BY rowid"
	  echo "DROP TABLE corpus_indexes;"; } >"$out.sql"
	sqlite3 -bail "$out.tmp" <"$out.sql"
	rm -f "$out.sql"
fi
mv "$out.tmp" "$out"
