#!/bin/sh
# tests/bench/trace_size.sh TRACE.db... — what frames stored once (schema 8)
# does to a trace's size: each trace (schema 7 or older, left untouched) is
# copied and VACUUMed (its pages as SQLite packs them: a collector's file
# also holds free pages), then converted to version 8's layout
# (tests/helpers/frames_v8.sql) and VACUUMed again.  One key=value line a
# trace: its bytes as given, as 7 and as 8, the share of the file the
# stacks take (stacks + stack_frames, or stacks + frames), and bytes per
# CUDA call and per second of the job (session start to end) as 8.
# docs/benchmarks.md, "Trace size: frames stored once (schema 8)".
set -eu
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-size.XXXXXX")
trap 'rm -rf "$T"' EXIT
here=$(dirname "$0")

share() { # db: the stack tables' share of the file's pages, in %
	sqlite3 "$1" "SELECT printf('%.1f', 100.0 * sum(CASE WHEN name IN ('stacks', 'stack_frames', 'frames')
		THEN pgsize ELSE 0 END) / sum(pgsize)) FROM dbstat"
}

for db in "$@"; do
	cp "$db" "$T/7.db"
	sqlite3 "$T/7.db" "PRAGMA journal_mode = DELETE; VACUUM" >/dev/null
	cp "$T/7.db" "$T/8.db"
	sqlite3 -bail "$T/8.db" <"$here/../helpers/frames_v8.sql" >/dev/null
	calls=$(sqlite3 "$T/7.db" "SELECT coalesce(sum(calls), 0) FROM call_blocks")
	secs=$(sqlite3 "$T/7.db" "SELECT ((SELECT value FROM session WHERE key = 'end_mono_ns') -
		(SELECT value FROM session WHERE key = 'start_mono_ns')) / 1e9")
	given=$(wc -c <"$db"); b7=$(wc -c <"$T/7.db"); b8=$(wc -c <"$T/8.db")
	echo "trace=$(basename "$db" .db) bytes_given=$given bytes_v7=$b7 bytes_v8=$b8" \
		"stack_share_v7=$(share "$T/7.db") stack_share_v8=$(share "$T/8.db")" \
		"stack_frames=$(sqlite3 "$T/8.db" "SELECT count(*) FROM stack_frames")" \
		"frames=$(sqlite3 "$T/8.db" "SELECT count(*) FROM frames") calls=$calls seconds=$secs" \
		"bytes_per_call_v7=$(awk -v b="$b7" -v c="$calls" 'BEGIN { printf "%.0f", c ? b / c : 0 }')" \
		"bytes_per_call_v8=$(awk -v b="$b8" -v c="$calls" 'BEGIN { printf "%.0f", c ? b / c : 0 }')" \
		"bytes_per_s_v8=$(awk -v b="$b8" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? b / s : 0) }')"
done
