#!/bin/sh
# collector_output.sh — a trace is never lost to the next collector (issue
# 40, item 1): a second collector given the same -o, or the same endpoint,
# stops before it changes anything (one line, exit 2) while the first
# goes on and keeps every call; -o keeps an existing trace unless --force;
# a collector that fails at start leaves no file behind, and a file with
# no trace in it is refused by the analyzer (exit 3), not read as an
# empty trace.
. tests/lib.sh
. tests/helpers/collector_e2e.sh
C=$B/ingero-collector
A=$B/ingero-analyze
E2=ipc://$T/second.sock

check "the first collector starts" start_collector --no-bpf
"$B/tests/collector_send" valid --calls 200 --batch 10 >/dev/null
ino=$(stat -c %i "$DB")
"$C" --no-bpf -o "$DB" --endpoint "$E2" --duration 0.2 >/dev/null 2>"$T/second.err"
check_eq "a second collector on the same -o: exit 2" 2 $?
check_eq "... with one line" 1 "$(wc -l <"$T/second.err")"
check "... that says another collector writes it" grep -q "another collector is writing it" "$T/second.err"
"$C" --no-bpf --force -o "$DB" --endpoint "$E2" --duration 0.2 >/dev/null 2>"$T/force.err"
check_eq "--force does not take it from a running collector: exit 2" 2 $?
check_eq "the first trace's file is the same file" "$ino" "$(stat -c %i "$DB")"
"$C" --no-bpf -o "$T/other.db" --duration 0.2 >/dev/null 2>"$T/endpoint.err"
check_eq "a second collector on the same endpoint: exit 2" 2 $?
check_eq "... with one line" 1 "$(wc -l <"$T/endpoint.err")"
check "... that says another collector listens there" grep -q "another collector listens there" "$T/endpoint.err"
check "... and leaves no file of its own" test ! -e "$T/other.db" -a ! -e "$T/other.db-wal" -a ! -e "$T/other.db-reserve"
"$B/tests/collector_send" valid --calls 100 --batch 10 >/dev/null
i=0   # (a loaded machine: the last messages may still be on their way)
while [ "$(q 'SELECT count(*) FROM cuda_calls' 2>/dev/null)" != 300 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
stop_collector TERM
check_eq "the first collector exits 0" 0 "$CRC"
check_eq "and keeps every call, before and after the others tried" 300 "$(q 'SELECT count(*) FROM cuda_calls')"
check "and its summary says so" grep -q ": 300 CUDA calls from" "$T/collector.err"
check "the reserve file is gone with it" test ! -e "$DB-reserve"
sum=$(cksum <"$DB")

# -o keeps an existing trace unless --force
"$C" --no-bpf -o "$DB" --endpoint "$E2" --duration 0.2 >/dev/null 2>"$T/exists.err"
check_eq "an existing trace is kept: exit 2" 2 $?
check "... said in one line" sh -c "[ \$(wc -l <'$T/exists.err') -eq 1 ] && grep -q 'exists: a trace is not replaced without --force' '$T/exists.err'"
check_eq "... and the file is untouched" "$sum" "$(cksum <"$DB")"
"$C" --no-bpf --force -o "$DB" --endpoint "$E2" --duration 0.2 >/dev/null 2>&1
check_eq "--force replaces it: exit 0" 0 $?
check_eq "... with a new trace" 0 "$(q 'SELECT count(*) FROM cuda_calls')"
: >"$T/empty.db"
"$C" --no-bpf -o "$T/empty.db" --endpoint "$E2" --duration 0.2 >/dev/null 2>&1
check_eq "an empty file is no trace: written without --force" 0 $?

# failures at start leave nothing behind
"$C" -o "$T/nopid.db" --endpoint "$E2" -p 999999999 >/dev/null 2>&1
check_eq "-p of no process: exit 2" 2 $?
check "... and no file left" test ! -e "$T/nopid.db" -a ! -e "$T/nopid.db-wal" -a ! -e "$T/nopid.db-shm"
"$C" --no-bpf -o "$T/bad.db" --endpoint "nosuch://x" --duration 0.2 >/dev/null 2>"$T/url.err"
check_eq "an endpoint that is no URL: exit 2" 2 $?
check "... and no file left" test ! -e "$T/bad.db"

# a file with the schema but no session: no trace at all
cp "$DB" "$T/none.db"
sqlite3 "$T/none.db" "DELETE FROM session"
"$A" explain "$T/none.db" >"$T/none.out" 2>"$T/none.err"
check_eq "no session: the analyzer exits 3" 3 $?
check "... with one line saying there is no trace" sh -c "[ \$(wc -l <'$T/none.err') -eq 1 ] && grep -q 'no trace in it' '$T/none.err'"
finish
