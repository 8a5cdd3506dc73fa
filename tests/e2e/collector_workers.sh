#!/bin/sh
# collector_workers.sh — the kernel's view of `starve --mode workers
# --workers 4` against the workload's own truth file: the process tree,
# off-CPU intervals and page allocations for every process, threads named,
# CPU busy time, and (when the preload library is built) the parent's syncs
# overlapping its workers' CPU use.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
TRUTH=$T/truth.txt

# (kernels of 1 ms: every step's sync waits ~5 ms, long enough to hold a
# worker's sample; at the default 50 us a run could have no sync over 1 ms)
FAKECUDA_KERNEL_US=1000 "$B/ingero-collector" -o "$DB" --sample-hz 499 --stats "$T/stats.txt" -- "$B/tests/starve" --mode workers \
	--workers 4 --batches 16 --truth "$TRUTH" >"$T/out.txt" 2>"$T/err.txt"
check_eq "collector exits with the workload's code" 0 $?
check_eq "full mode" full "$(q "SELECT value FROM session WHERE key='mode'")"
check_eq "truth has the parent and 4 workers" 5 "$(wc -l <"$TRUTH" | tr -d ' ')"
main=$(sed -n 's/^pid=\([0-9]*\) .*role=main.*/\1/p' "$TRUTH")
collector_pid=$(sed -n 's/^pid=[0-9]* ppid=\([0-9]*\) .*role=main.*/\1/p' "$TRUTH")
check_eq "main process's parent is the collector" "$collector_pid" "$(q "SELECT ppid FROM processes WHERE pid=$main")"
check_eq "main process named after exec" starve "$(q "SELECT comm FROM processes WHERE pid=$main")"
check_eq "main process exit code" 0 "$(q "SELECT exit_code FROM processes WHERE pid=$main")"
while read -r line; do
	pid=$(echo "$line" | sed 's/^pid=\([0-9]*\).*/\1/')
	ppid=$(echo "$line" | sed 's/.* ppid=\([0-9]*\).*/\1/')
	role=$(echo "$line" | sed 's/.* role=\([a-z]*\).*/\1/')
	check_eq "$role $pid: parent" "$ppid" "$(q "SELECT ppid FROM processes WHERE pid=$pid")"
	check_ge "$role $pid: off-CPU intervals" "$(q "SELECT count(*) FROM off_cpu WHERE pid=$pid")" 1
	check_eq "$role $pid: intervals well-formed" 0 "$(q "SELECT count(*) FROM off_cpu WHERE pid=$pid AND NOT (start_ns <= runnable_ns AND runnable_ns <= end_ns)")"
	check_ge "$role $pid: page allocations" "$(q "SELECT coalesce(sum(pages),0) FROM page_allocs WHERE pid=$pid")" 1000
	check_ge "$role $pid: start and exit times" "$(q "SELECT count(*) FROM processes WHERE pid=$pid AND exit_ns > start_ns")" 1
	check_eq "$role $pid: main thread in threads" "$pid" "$(q "SELECT pid FROM threads WHERE tid=$pid")"
done <"$TRUTH"
check_eq "workers are exactly the main process's children" 4 "$(q "SELECT count(*) FROM processes WHERE ppid=$main")"
check_eq "workers under contention get preempted" 4 "$(q "SELECT count(DISTINCT pid) FROM off_cpu WHERE preempted=1 AND pid IN (SELECT pid FROM processes WHERE ppid=$main)")"
check_ge "CPU busy time recorded for every CPU" "$(q 'SELECT count(DISTINCT cpu) FROM cpu_busy')" "$(nproc)"
check_eq "busy time never exceeds the bucket" 0 "$(q "SELECT count(*) FROM cpu_busy WHERE busy_ns > (SELECT value FROM session WHERE key='bucket_ns')")"
check_eq "no kernel records lost" 0 "$(q "SELECT coalesce(sum(count),0) FROM losses WHERE source LIKE 'bpf_ringbuf_%'
	AND source != 'bpf_ringbuf_unclosed'")"
check_unclosed_rare

if [ -f "$B/libingero_preload.so" ] && [ "$(q 'SELECT count(*) FROM cuda_calls')" -gt 0 ]; then
	# while the parent sits in a sync, its workers are on a CPU building batches
	overlap=$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id=c.api AND a.class='sync'
		WHERE c.pid=$main AND c.dur_ns > 1000000 AND EXISTS (SELECT 1 FROM cpu_samples s
		WHERE s.pid IN (SELECT pid FROM processes WHERE ppid=$main)
		AND s.ts_ns BETWEEN c.start_ns AND c.start_ns + c.dur_ns)")
	check_ge "parent's long syncs overlap workers on-CPU" "$overlap" 1
else
	skip "preload library not built: sync/worker overlap"
fi

# a worker that outlives the process whose ring it writes into: stored as a
# loss (per pid, a process: its later calls cannot be counted), shown by explain
rm -f "$DB" "$DB-wal" "$DB-shm"
"$B/ingero-collector" --force -o "$DB" -- env LD_PRELOAD="$PWD/$B/libingero_preload.so" \
	"$B/tests/preload_calls" outlive 20 >"$T/outlive.truth" 2>"$T/err.txt"
check_eq "outliving worker: collector exits 0" 0 $?
parent=$(sed -n 1p "$T/outlive.truth" | sed 's/^truth pid=\([0-9]*\) .*/\1/')
child=$(q "SELECT pid FROM processes WHERE ppid = $parent LIMIT 1")
check_eq "outliving worker: losses has preload_after_owner_exit = 1 for it" 1 \
	"$(q "SELECT count FROM losses WHERE source = 'preload_after_owner_exit' AND pid = ${child:-0}")"
check "outliving worker: explain lists it" sh -c \
	"'$B/ingero-analyze' explain --verbose --width 400 '$DB' | grep -q '^Lost while tracing.* preload_after_owner_exit 1'"
finish
