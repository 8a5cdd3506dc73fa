#!/bin/sh
# collector_hostile.sh — an unprivileged local user cannot cut a trace or
# hold the collector past its drain limit (issue 40, item 3): while a
# traced program makes calls, `nobody` sends one message of 200 call
# records for pids that do not exist.  Each costs the collector a look-up,
# never a wait (before: a wait for the kernel's fork events per pid, the
# receiver stalled, the trace kept 476 of 3,600 calls and the collector
# exited 41 s after the program).  The program's calls are all stored, the
# 200 are counted as spoofed under the sender, and the collector closes the
# trace within the 3 s drain limit of the program's exit.
# tests/run: alone (that the collector keeps up with the program's ~10,000 calls a second
# depends on the CPUs being free for it: beside the pool's load on 2 CPUs the library dropped
# 128 and 179 of 24,004 calls, every one counted, in two CI runs of 2026-12-05/06)
. tests/lib.sh
if ! is_root; then skip "an unprivileged sender next to a root collector needs root"; finish; fi
. tests/helpers/collector_e2e.sh
chmod 0711 "$T"   # nobody reaches the socket (0666) inside

start_collector --sample-hz 0 -- env FAKECUDA_SYNC_EXTRA_US=200 "$B/tests/preload_calls" thin 12000 \
	>"$T/truth.txt"
i=0   # until the program's calls are coming in
while [ "$(q 'SELECT count(*) FROM call_blocks' 2>/dev/null || echo 0)" -eq 0 ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tests/collector_send" unknown >"$T/sent.txt" 2>"$T/send.err"
check_eq "the unprivileged sender sent its 200 records" "unknown=200" "$(cat "$T/sent.txt")"
wait "$CPID"
check_eq "the program and the collector exit 0" 0 $?
pid=$(sed -n 's/^truth pid=\([0-9]*\) .*/\1/p' "$T/truth.txt" | head -n 1)
made=$(q "SELECT made FROM processes WHERE pid = $pid")
check_ge "the program made its calls" "$made" 24000
check_eq "every one is in the trace" "$made" "$(q "SELECT count(*) FROM cuda_calls WHERE pid = $pid")"
check_eq "none dropped by the library (the collector kept up)" 0 \
	"$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'preload_dropped'")"
check_eq "the 200 records counted as spoofed" 200 \
	"$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'spoofed_record'")"
check_eq "... under their sender, not the program" 0 \
	"$(q "SELECT count(*) FROM losses WHERE source = 'spoofed_record' AND pid = $pid")"
check_eq "nothing stored for the pids claimed" 0 \
	"$(q "SELECT count(*) FROM cuda_calls WHERE pid <> $pid")"
# the drain: from the program's exit (the kernel's record) to the trace's end
drain=$(q "SELECT (SELECT value FROM session WHERE key = 'end_mono_ns') - exit_ns FROM processes WHERE pid = $pid")
check "the trace closed within the 3 s drain limit of the program's exit (+0.5 s): ${drain} ns" \
	test "$drain" -lt 3500000000

# a connection closed before nng's handshake stops nng 1.5's listener from
# taking any later sender: the collector sees it and listens again
check "an open-mode collector starts" start_collector --no-bpf --stats "$T/stats.txt"
"$B/tests/collector_send" valid --calls 20 --batch 10 >/dev/null
# Whether a close stops nng's listener depends on where nng's accept is when
# it lands: on a loaded runner one close sometimes left it working (seen
# once in six runs, 2026-12-05) — then the next close is tried, up to five,
# each given 2 s for the collector (it looks every 0.5 s) to say it listens
# again
raws=0
while [ $raws -lt 5 ] && ! grep -q "listening again" "$T/collector.err"; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tests/collector_send" rawclose >"$T/raw.txt"
	raws=$((raws + 1))
	[ $raws -gt 1 ] || check_eq "nobody connected and closed at once" "rawclose=1" "$(cat "$T/raw.txt")"
	i=0
	while [ $i -lt 20 ] && ! grep -q "listening again" "$T/collector.err"; do sleep 0.1; i=$((i + 1)); done
done
echo "# raw closes until the listener stopped: $raws"
"$B/tests/collector_send" valid --calls 50 --batch 10 >/dev/null
stop_collector TERM
check_eq "a sender after it is heard: every call stored" 70 "$(q 'SELECT count(*) FROM cuda_calls')"
check_eq "the listener was made again, once" 1 "$(sed -n 's/^listener_restarts=//p' "$T/stats.txt")"
check "and the collector said so" grep -q "nng stopped taking senders .*: listening again" "$T/collector.err"
finish
