#!/bin/sh
# tests/corpus/pack.sh IN.db OUT.db.xz — a trace as the corpus keeps it, a
# third smaller than the collector's file compressed, losslessly:
#   * its indexes dropped (their SQL kept in corpus_indexes): derived data;
#   * schema 7 and older: stack_frames emptied, its rows kept as distinct
#     frames (corpus_frames) and per-stack references to them
#     (corpus_stack_frames): the same frames repeat across a trace's stacks
#     (schema 8 stores frames once itself: its stack_frames is a view, and
#     its tables are kept as they are);
#   * the file vacuumed, then xz -9e.
# unpack.sh undoes each step (the frames as schema 8 stores them, or with
# --rows as they were); analyzer_corpus.sh reads only unpacked files.
set -eu
in=$1; out=$2
tmp=$(mktemp "${TMPDIR:-/tmp}/corpus-pack.XXXXXX")
trap 'rm -f "$tmp" "$tmp-wal" "$tmp-shm"' EXIT
cp "$in" "$tmp"
[ -f "$in-wal" ] && cp "$in-wal" "$tmp-wal"
sqlite3 "$tmp" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
drops=$(sqlite3 "$tmp" "SELECT 'DROP INDEX \"' || name || '\";' FROM sqlite_master
	WHERE type = 'index' AND sql IS NOT NULL")
frames=""
if [ -n "$(sqlite3 "$tmp" "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'stack_frames'")" ]; then
	frames="
CREATE TABLE corpus_stack_frames(stack_id INTEGER NOT NULL, depth INTEGER NOT NULL, kind TEXT NOT NULL,
	frame INTEGER NOT NULL, PRIMARY KEY(stack_id, kind, depth)) WITHOUT ROWID;
CREATE TEMP TABLE ranked AS SELECT stack_id, depth, kind, ip, symbol, module, offset, file, line,
	dense_rank() OVER (ORDER BY kind, ip, symbol, module, offset, file, line) AS frame FROM stack_frames;
CREATE TABLE corpus_frames(id INTEGER PRIMARY KEY, kind, ip, symbol, module, offset, file, line);
INSERT INTO corpus_frames SELECT DISTINCT frame, kind, ip, symbol, module, offset, file, line FROM ranked;
INSERT INTO corpus_stack_frames SELECT stack_id, depth, kind, frame FROM ranked;
DROP TABLE ranked;
DELETE FROM stack_frames;"
fi
sqlite3 "$tmp" "CREATE TABLE corpus_indexes AS SELECT name, sql FROM sqlite_master
	WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid; $drops $frames VACUUM;"
xz -9e -c "$tmp" >"$out.tmp" && mv "$out.tmp" "$out"
