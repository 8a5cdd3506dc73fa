#!/bin/sh
# collector_open.sh — the workflow users type first: the collector running on
# its own, the program started elsewhere with LD_PRELOAD.  The program is
# enrolled from its first message, with the workers it forked before that,
# and every process's calls and kernel evidence are recorded.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
if [ ! -f "$B/libingero_preload.so" ]; then skip "preload library not built"; finish; fi
. tests/helpers/collector_e2e.sh
TRUTH=$T/truth.txt

check "collector starts in open mode" start_collector
LD_PRELOAD=$PWD/$B/libingero_preload.so "$B/tests/starve" --mode workers --workers 3 --batches 9 \
	--truth "$TRUTH" >/dev/null 2>&1
check_eq "workload exits 0" 0 $?
sleep 0.3
stop_collector INT
check_eq "collector exits 0" 0 "$CRC"
while read -r line; do
	pid=$(echo "$line" | sed 's/^pid=\([0-9]*\).*/\1/')
	role=$(echo "$line" | sed 's/.* role=\([a-z]*\).*/\1/')
	want=$(echo "$line" | tr ' ' '\n' | grep -E '^(cuda|cu[A-Z]|__cuda)[A-Za-z0-9_]*=' | awk -F= '{s += $2} END {print s}')
	check_eq "$role $pid: every call stored" "$want" "$(q "SELECT count(*) FROM cuda_calls WHERE pid=$pid")"
	check_eq "$role $pid: announced" 1 "$(q "SELECT announced FROM processes WHERE pid=$pid")"
	check_ge "$role $pid: traced by the kernel too" "$(q "SELECT count(*) FROM off_cpu WHERE pid=$pid")" 1
done <"$TRUTH"
check_eq "nothing refused" 0 "$(q "SELECT coalesce(sum(count),0) FROM losses WHERE source IN ('spoofed_record','untraced_sender','malformed_message')")"
finish
