#!/bin/sh
# collector_signals.sh — stopping keeps what was accepted: after SIGTERM
# every call the collector accepted is in the file (and everything sent
# before the signal); after SIGKILL the file still opens, consistent, with
# what was committed (at most ~50 ms of work lost).
. tests/lib.sh
. tests/helpers/collector_e2e.sh

check "collector starts" start_collector --stats "$T/stats.txt"
"$B/tests/collector_send" valid --calls 20000 --batch 500 >"$T/phase1.txt"
phase1=$(tail -n 1 "$T/phase1.txt" | sed 's/sent_calls=//')
# a second sender still streaming when the signal comes
"$B/tests/collector_send" valid --calls 200000 --batch 200 --interval-ms 2 >"$T/phase2.txt" &
SPID=$!
sleep 0.5
stop_collector TERM
wait "$SPID" 2>/dev/null
check_eq "SIGTERM: exit 0" 0 "$CRC"
accepted=$(sed -n 's/^calls=//p' "$T/stats.txt")
stored=$(q 'SELECT count(*) FROM cuda_calls')
check_eq "SIGTERM: every accepted call is in the file" "$accepted" "$stored"
check_ge "SIGTERM: everything sent before the signal is there" "$stored" "$((phase1 + 1))"
check_eq "SIGTERM: session closed" 1 "$(q "SELECT count(*) FROM session WHERE key='end_mono_ns'")"

rm -f "$DB"
check "collector starts again" start_collector
"$B/tests/collector_send" valid --calls 10000 --batch 500 >/dev/null
"$B/tests/collector_send" valid --calls 1000000 --batch 500 --interval-ms 1 >/dev/null 2>&1 &
SPID=$!
sleep 1
stop_collector KILL
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
check_eq "SIGKILL: killed" 137 "$CRC"
check_eq "SIGKILL: file opens and is consistent" ok "$(q 'PRAGMA integrity_check')"
check_eq "SIGKILL: schema version" "$SCHEMA_VERSION" "$(q 'PRAGMA user_version')"
check_ge "SIGKILL: committed calls are there" "$(q 'SELECT count(*) FROM cuda_calls')" 10000
finish
