#!/bin/sh
# collector_disk_full.sh — a full disk (issue 40, item 2), on a small tmpfs:
# the collector stops recording by itself and exits 4, says so in one
# line, and its final line and --stats give what was stored, not what was
# sent; what it could not store is counted in losses (not_stored_calls);
# the file it leaves is read by the analyzer (with its WAL if the last
# checkpoint could not finish, as SQLite reads it, and says so) with
# exactly the calls the collector says it stored, and marked incomplete.
# A disk full from the start: exit 4 and no file left behind.
. tests/lib.sh
if ! is_root; then skip "mounting a tmpfs needs root"; finish; fi
. tests/helpers/collector_e2e.sh
C=$B/ingero-collector
A=$B/ingero-analyze
FS=$T/fs
mkdir "$FS"
mount -t tmpfs -o size=3m ingero-test "$FS" || { skip "cannot mount a tmpfs"; finish; }
trap 'umount "$FS" 2>/dev/null; rm -rf "$T"' EXIT

"$C" --no-bpf -o "$FS/r.db" --stats "$T/stats" 2>"$T/err" &
CPID=$!
i=0; while [ ! -S "$T/ingero.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
# calls as a program makes them (they do not pack small): a few first, given time to be
# committed (the writer takes what is pending in one transaction, up to 128 K calls before it
# wakes early: a first transaction that big overflowed the disk alone, 0 stored, 1 run in 4 on a
# loaded VM), then far more than 3 MB hold
"$B/tests/collector_send" bench --calls 2000 --batch 1000 >/dev/null 2>&1
sleep 0.3
"$B/tests/collector_send" bench --calls 400000 --batch 1000 >/dev/null 2>&1
i=0; while kill -0 "$CPID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$CPID" 2>/dev/null   # (a collector that did not stop by itself)
wait "$CPID"
check_eq "the disk filled: the collector stopped by itself, exit 4" 4 $?
check "it said so, once" sh -c "[ \$(grep -c 'a write failed (database or disk is full): recording stopped' '$T/err') -eq 1 ]"
kv() { sed -n "s/^$1=//p" "$T/stats"; }
stored=$(kv calls_committed)
lost=$(kv calls_not_stored)
check_ge "some calls were stored" "$stored" 1
check_ge "some were not" "$lost" 1
check_eq "stored + not stored = accepted" "$(kv calls)" "$((stored + lost))"
check_eq "--stats says the store failed" 1 "$(kv store_failed)"
check "the final line gives what was stored, and what was not" \
	grep -q ": $stored CUDA calls from .*recording stopped (database or disk is full): $lost CUDA calls not stored" "$T/err"
check "no reserve file left" test ! -e "$FS/r.db-reserve"

# read where it is (the disk still full but for the reserve's room), then
# copied away without its -shm: the same calls both times
DB=$FS/r.db
check_eq "the analyzer reads exactly the calls stored" "$stored" "$(q 'SELECT count(*) FROM cuda_calls')"
filed=$(q "SELECT sum(count) FROM losses WHERE source='not_stored_calls'")
check_eq "and the losses: not_stored_calls" "$lost" "$filed"
[ "$filed" = "$lost" ] || sed 's/^/# /' "$T/err"
check_eq "the session says why it stopped" "database or disk is full" "$(q "SELECT value FROM session WHERE key='store_error'")"
"$A" explain --width 1000 "$DB" >"$T/explain.txt" 2>"$T/explain.err"
check_eq "explain exits 0" 0 $?
check "explain says the trace is incomplete, and why" \
	grep -q "^Incomplete: recording stopped at .*: a write failed (database or disk is full)" "$T/explain.txt"
if [ -s "$DB-wal" ]; then
	check "and that it read the WAL too" grep -q "^Read with .*r.db-wal: the collector's last checkpoint did not finish" "$T/explain.txt"
fi
"$A" stats --json "$DB" >"$T/stats.json"
check_eq "stats --json: trace.incomplete.reason" write_failed \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["incomplete"]["reason"])' <"$T/stats.json")"
check_eq "stats --json: the calls stored" "$stored" \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["cuda_calls"])' <"$T/stats.json")"
mkdir "$T/copy"
cp "$FS/r.db" "$T/copy/"
[ -e "$FS/r.db-wal" ] && cp "$FS/r.db-wal" "$T/copy/"
DB=$T/copy/r.db
check_eq "a copy (with its WAL, without -shm) reads the same" "$stored" "$(q 'SELECT count(*) FROM cuda_calls')"
"$A" stats "$DB" >/dev/null 2>"$T/copy.err"
check_eq "... and stats reads it, exit 0" 0 $?

# full from the start: no room even for the reserve
rm -f "$FS"/r.db*
dd if=/dev/zero of="$FS/filler" bs=64k 2>/dev/null   # until the disk is full
"$C" --no-bpf -o "$FS/full.db" -- true >/dev/null 2>"$T/full.err"
check_eq "full from the start: exit 4" 4 $?
check_eq "... one line" 1 "$(wc -l <"$T/full.err" | tr -d ' ')"
check "... and no file left behind" sh -c "! ls '$FS'/full.db* >/dev/null 2>&1"
finish
