#!/bin/sh
# collector_split.sh — INGERO_SPLIT_BPF (a benchmark's setting, collector/tracer.h):
# the library records in every capture window, the eBPF evidence it names
# ("samples", "sched", "mem", or "all") only in the first, third, ... — so
# one process toggling its capture measures that part's share of recording
# against the rest.  The fake runtime's launch loop toggles over four
# windows of ~0.6 s, sampled at 199 Hz, each step's sync sleeping for its
# kernels (off-CPU intervals) and each step faulting in 16 fresh pages
# (page faults and allocations); an
# unknown value is refused.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
export FAKECUDA_KERNEL_US=20

INGERO_SPLIT_BPF=bogus "$B/ingero-collector" -q -o "$DB" -- true >/dev/null 2>"$T/bad.err"
check_eq "an unknown INGERO_SPLIT_BPF: exit 2" 2 $?
check_eq "... with one line saying what it accepts" "ingero-collector: INGERO_SPLIT_BPF=bogus: not one of all, samples, sched, mem" \
	"$(cat "$T/bad.err")"

# per_window SQL: for each capture window in order (a start to the row after
# it), SQL's count over rows of the program's pid with time t in the window
# from 200 ms after its start (the collector flips the `traced` map when the
# start reaches it); one line of counts, space-separated
per_window() {
	q "WITH s AS (SELECT pid, t_ns, recording, lead(t_ns) OVER (ORDER BY t_ns) AS end_ns FROM capture),
		w AS (SELECT pid, t_ns + 200000000 AS a, end_ns AS b, row_number() OVER (ORDER BY t_ns) AS k
		      FROM s WHERE recording = 1 AND end_ns IS NOT NULL)
		SELECT ($1) FROM w ORDER BY k" | tr '\n' ' ' | sed 's/ $//'
}
samples='SELECT count(*) FROM cpu_samples c WHERE c.pid = w.pid AND c.ts_ns >= w.a AND c.ts_ns < w.b'
calls='SELECT count(*) FROM cuda_calls c WHERE c.pid = w.pid AND c.start_ns >= w.a AND c.start_ns < w.b'
off_cpu='SELECT count(*) FROM off_cpu o WHERE o.pid = w.pid AND o.start_ns >= w.a AND o.end_ns < w.b'
# (50 ms buckets: those wholly inside the window)
faults='SELECT coalesce(sum(faults), 0) FROM page_allocs m WHERE m.pid = w.pid AND m.bucket_ns >= w.a
	AND m.bucket_ns + 50000000 <= w.b'
# page allocations (mem.bpf.c's own counter, apart from the faults)
pages=$(echo "$faults" | sed 's/sum(faults)/sum(pages)/')

# in_windows PART HELD: the count of $PART (the SQL above) in windows 1 and
# 3 is some, in 2 and 4 none when HELD is "held", some in all four otherwise
in_windows() {
	eval "sql=\$$1"
	set -- "$1" "$2" $(per_window "$sql")
	check_eq "$split: four windows ($1)" 4 $(($# - 2))
	check_ge "$split: $1 in window 1 ($3)" "${3:-0}" 5
	check_ge "$split: $1 in window 3 ($5)" "${5:-0}" 5
	if [ "$2" = held ]; then
		check_eq "$split: no $1 in window 2" 0 "${4:--}"
		check_eq "$split: no $1 in window 4" 0 "${6:--}"
	else
		check_ge "$split: $1 in window 2 too ($4)" "${4:-0}" 5
		check_ge "$split: $1 in window 4 too ($6)" "${6:-0}" 5
	fi
}

for split in samples sched mem all; do
	INGERO_SPLIT_BPF=$split INGERO_CAPTURE=cudaProfilerApi "$B/ingero-collector" -q --force --sample-hz 199 \
		--bucket-ms 50 -o "$DB" -- python3 tests/bench/launch_loop.py "$B/fakecuda/libcudart.so.13" \
		--toggle --chunks 9 --steps 600 --fault-pages 16 >"$T/chunks.txt" 2>"$T/err.txt"
	check_eq "$split: the loop traced, exit 0" 0 $?
	check_eq "$split: the session says the split" "$split" "$(q "SELECT value FROM session WHERE key = 'split_bpf'")"
	for part in samples off_cpu faults pages; do
		case $split:$part in
		all:*|samples:samples|sched:off_cpu|mem:faults|mem:pages) held=held ;;
		*) held=kept ;;
		esac
		in_windows $part $held
	done
	set -- $(per_window "$calls")
	check "$split: the library recorded in every window ($*)" \
		test "${1:-0}" -gt 1000 -a "${2:-0}" -gt 1000 -a "${3:-0}" -gt 1000 -a "${4:-0}" -gt 1000
done
finish
