#!/bin/sh
# Issue 42's device call: what the collector's BPF programs cost per context switch on the H200,
# with the programs the collector loads now (sched.bpf.c's on_switch, and on_wakeup of issue 15's
# wake-up evidence).  Run on the device from the repository root, the bundle of this branch
# unpacked into .devbin (`make bundle`: it now carries bench/tests/collector_pingpong).  ~1 minute.
#
#   1: RUNS (9) interleaved rounds of tests/bench/collector.sh's ping-pong (a parent and a child
#      pinned to CPU 0 hand a byte over two pipes: every hand-off one context switch), untraced /
#      traced by the collector (its threads on CPU 1) / the collector up but not tracing it; the
#      traced runs with INGERO_BPF_STATS=1, whose kernel run-time statistics give each program's
#      own time per run (they add two clock reads to each run).  Prints per round, and the medians:
#      bpf_ns_per_switch (traced - untraced wall per switch), _untraced, and from the statistics
#      on_switch_ns_per_run, on_wakeup_ns_per_run, bpf_ns_per_switch_stats (all programs' time /
#      the ping-pong's switches).  Budget (issue 42): <= 300 ns.
export PATH=/opt/torch/.venv/bin:$PATH
D=${D:-$PWD/.devbin}
ROUNDS=${ROUNDS:-400000} RUNS=${RUNS:-9}
T=$(mktemp -d /tmp/ingero-bpf.XXXXXX)
export INGERO_ENDPOINT="ipc://$T/ingero.sock"
PP=$D/bench/tests/collector_pingpong
case ${1:-} in
1)	nproc; uname -r; grep -m1 'model name' /proc/cpuinfo
	cat /sys/devices/system/clocksource/clocksource0/current_clocksource
	for r in $(seq "$RUNS"); do
		b=$("$PP" "$ROUNDS" | sed 's/ns_per_switch=//')
		t=$(INGERO_BPF_STATS=1 taskset -c 1 "$D/ingero-collector" -q -o "$T/pp.db" --sample-hz 0 -- \
			"$PP" "$ROUNDS" 2>/dev/null | sed 's/ns_per_switch=//')
		s=$(python3 - "$T/pp.db" "$ROUNDS" <<'PY'
import sqlite3, sys
kv = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM session WHERE key LIKE 'bpf_run%'"))
g = lambda k: float(kv.get(k, 0))
per = lambda p: g("bpf_run_ns." + p) / g("bpf_runs." + p) if g("bpf_runs." + p) else 0
print("%.0f %.0f %.0f %.0f" % (per("on_switch"), per("on_wakeup"), g("bpf_run_ns") / (2 * int(sys.argv[2])), per("on_waking")))
PY
)
		rm -f "$T"/pp.db*
		taskset -c 1 "$D/ingero-collector" -q -o "$T/idle.db" --sample-hz 0 2>/dev/null &
		cp=$!; i=0; while [ ! -S "$T/ingero.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		sleep 0.3
		u=$("$PP" "$ROUNDS" | sed 's/ns_per_switch=//')
		kill -TERM $cp; wait $cp; rm -f "$T"/idle.db*
		echo "round $r base=$b traced=$t untraced=$u stats(on_switch/run on_wakeup/run all/switch on_waking/run)=$s"
		echo "$b $t $u $s" >>"$T/rounds"
	done
	med() { cut -d' ' -f"$1" "$T/rounds" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	echo "switch_ns_baseline=$(med 1)"
	echo "bpf_ns_per_switch=$(($(med 2) - $(med 1)))"
	echo "bpf_ns_per_switch_untraced=$(($(med 3) - $(med 1)))"
	echo "on_switch_ns_per_run=$(med 4)"
	echo "on_wakeup_ns_per_run=$(med 5)"
	echo "bpf_ns_per_switch_stats=$(med 6)"
	echo "on_waking_ns_per_run=$(med 7)"
	rm -rf "$T" ;;
*) echo "usage: calls.sh 1 (on the device, the bundle in .devbin)" >&2; exit 2 ;;
esac
