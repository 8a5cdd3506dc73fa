#!/bin/sh
# collector_runq.sh — run-queue delay (off_cpu.end_ns - runnable_ns) is
# clearly higher when 4 workers fight for the CPUs than in direct mode.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh

mean_runq() { # mode → mean run-queue delay per off-CPU interval, µs
	"$B/ingero-collector" -q -o "$T/$1.db" -- "$B/tests/starve" --mode "$1" --workers 4 --batches 16 \
		>/dev/null 2>&1
	sqlite3 "$T/$1.db" "SELECT CAST(avg(end_ns - runnable_ns) / 1000 AS INTEGER) FROM off_cpu"
}
direct=$(mean_runq direct)
workers=$(mean_runq workers)
echo "# mean run-queue delay: direct ${direct} us, workers ${workers} us"
check_ge "direct mode has off-CPU intervals" "$(sqlite3 "$T/direct.db" 'SELECT count(*) FROM off_cpu')" 1
check_ge "contention at least doubles the mean run-queue delay" "$workers" "$((direct * 2 + 1))"
check_ge "preempted intervals under contention" "$(sqlite3 "$T/workers.db" 'SELECT count(*) FROM off_cpu WHERE preempted=1')" 10
finish
