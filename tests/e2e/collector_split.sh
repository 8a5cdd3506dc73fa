#!/bin/sh
# collector_split.sh — INGERO_SPLIT_BPF (a benchmark's setting, collector/tracer.h):
# the library records in every capture window, the eBPF evidence it names
# ("samples", or "all") only in the first, third, ... — so one process
# toggling its capture measures that part's share of recording against the
# rest.  The fake runtime's launch loop toggles over four windows of ~0.6 s,
# CPU-bound, sampled at 199 Hz; an unknown value is refused.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
export FAKECUDA_KERNEL_US=1

INGERO_SPLIT_BPF=bogus "$B/ingero-collector" -q -o "$DB" -- true >/dev/null 2>"$T/bad.err"
check_eq "an unknown INGERO_SPLIT_BPF: exit 2" 2 $?
check_eq "... with one line saying what it accepts" "ingero-collector: INGERO_SPLIT_BPF=bogus: not one of all, samples" \
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

for split in samples all; do
	INGERO_SPLIT_BPF=$split INGERO_CAPTURE=cudaProfilerApi "$B/ingero-collector" -q --sample-hz 199 -o "$DB" -- \
		python3 tests/bench/launch_loop.py "$B/fakecuda/libcudart.so.13" --toggle --chunks 9 --steps 3000 \
		>"$T/chunks.txt" 2>"$T/err.txt"
	check_eq "$split: the loop traced, exit 0" 0 $?
	check_eq "$split: the session says the split" "$split" "$(q "SELECT value FROM session WHERE key = 'split_bpf'")"
	set -- $(per_window "$samples")
	check_eq "$split: four windows" 4 $#
	check_ge "$split: window 1 sampled ($1)" "${1:-0}" 5
	check_eq "$split: window 2 not sampled" 0 "${2:--}"
	check_ge "$split: window 3 sampled ($3)" "${3:-0}" 5
	check_eq "$split: window 4 not sampled" 0 "${4:--}"
	set -- $(per_window "$calls")
	check "$split: the library recorded in every window ($*)" \
		test "${1:-0}" -gt 1000 -a "${2:-0}" -gt 1000 -a "${3:-0}" -gt 1000 -a "${4:-0}" -gt 1000
done
finish
