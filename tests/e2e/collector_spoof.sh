#!/bin/sh
# collector_spoof.sh — a sender may speak for itself and its descendants,
# never for anyone else: records claiming pid 1 (every record type, and a
# foreign thread under its own pid) are refused and counted under the
# sender's pid as spoofed_record; its own records are all kept.
. tests/lib.sh
. tests/helpers/collector_e2e.sh

check "collector starts" start_collector --no-bpf
"$B/tests/collector_send" spoof --claim 1 >"$T/sent.txt"
stop_collector TERM
check_eq "collector exits 0 on SIGTERM" 0 "$CRC"
own=$(sed -n 's/.*own=\([0-9]*\).*/\1/p' "$T/sent.txt")
spoofed=$(sed -n 's/.*spoofed=\([0-9]*\).*/\1/p' "$T/sent.txt")
check_eq "sender's own calls all stored" "$own" "$(q 'SELECT count(*) FROM cuda_calls')"
check_eq "nothing stored for pid 1" 0 "$(q 'SELECT (SELECT count(*) FROM cuda_calls WHERE pid=1 OR tid=1) + (SELECT count(*) FROM processes WHERE pid=1) + (SELECT count(*) FROM kernels) + (SELECT count(*) FROM stacks)')"
check_eq "spoofed records counted" "$spoofed" "$(q "SELECT sum(count) FROM losses WHERE source='spoofed_record'")"
check_eq "counted under the sender's pid" "$(q 'SELECT DISTINCT pid FROM cuda_calls')" "$(q "SELECT pid FROM losses WHERE source='spoofed_record'")"

# targeted mode: a process outside the traced tree is not even enrolled
check "collector starts for -- CMD" start_collector --no-bpf -- sleep 1
"$B/tests/collector_send" valid --calls 10 >/dev/null
stop_collector TERM
check_eq "an outsider's calls are refused while tracing a command" 0 "$(q 'SELECT count(*) FROM cuda_calls')"
check_eq "and counted as untraced_sender (HELLO, 10 calls, COUNTS)" 12 "$(q "SELECT sum(count) FROM losses WHERE source='untraced_sender'")"
finish
