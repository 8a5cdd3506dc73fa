#!/bin/sh
# tests/bench/collector.sh — `make bench-collector`: the collector's figures
# as key=value lines (docs/benchmarks.md records them with machine and date).
#
#   ingest_events_per_s   CUDA-call records, preload wire format, from nng into
#                         SQLite, zero loss: the sender blocks when the
#                         collector is behind, and every sent call must be in
#                         the file.  Time: first message until the calls are
#                         committed and checkpointed into the file (the
#                         checkpoint thread's work counts).  CUDA-only mode:
#                         the ingest path alone.
#                         Median of INGEST_RUNS runs; _min and _max beside it.
#   bpf_ns_per_switch     added cost of one context switch of a traced thread
#                         (a pinned pipe ping-pong traced by the collector,
#                         off-CPU interval emitted on every switch) over the
#                         same ping-pong without the collector, same run;
#   bpf_ns_per_switch_untraced   the same with the programs attached but the
#                         ping-pong not traced (the cost every other task pays)
#   bpf_ns_per_fault      added cost of one user page fault of a traced process
#                         (collector_faults: fresh pages touched, each a fault
#                         and a page allocation, both counted by mem.bpf.c) over
#                         the same faults without the collector, same run
#   bpf_ns_per_fault_untraced   the same faults, the collector running but not
#                         tracing them: what mm_page_alloc's program costs
#                         every other process's page allocations
#   collector_cpu_pct     the collector's own CPU time (all threads) while it
#                         traces `starve --mode workers`, sampling at 99 Hz,
#                         in % of one core
#   bpf_ns_per_sample     what one on-CPU sample of a traced Python thread 40
#                         frames deep costs the BPF programs (its kernel and
#                         user stacks, its Python frames): the programs' run
#                         time (INGERO_BPF_STATS) of a traced run sampled at
#                         999 Hz less the same run unsampled, over the samples
#                         stored; the sampler's part of a recording's cost on
#                         the sampled thread itself (docs/gpu-runs.md section 39)
#   bpf_ns_per_switch_alt, _untraced_alt, bpf_ns_per_sample_alt   with
#                         ALT_COLLECTOR=PATH: the same figures for another
#                         build of the collector, interleaved run by run with
#                         this one (an A/B)
# Environment: INGEST_CALLS (4000000), INGEST_RUNS (5), PINGPONG_ROUNDS (200000),
# FAULT_ROUNDS (20), RUNS (5), SAMPLE_SECONDS (3), ALT_COLLECTOR.
B=${B:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export INGERO_ENDPOINT="ipc://$T/ingero.sock"
CALLS=${INGEST_CALLS:-4000000}
INGEST_RUNS=${INGEST_RUNS:-5}
ROUNDS=${PINGPONG_ROUNDS:-200000}
FAULT_ROUNDS=${FAULT_ROUNDS:-20}
RUNS=${RUNS:-5}

kv() { sed -n "s/^$1=//p" "$2"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wait_socket() { i=0; while [ ! -S "$T/ingero.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; }

echo "machine=$(uname -n) cpus=$(nproc) kernel=$(uname -r) model=\"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)\""
echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"

# --- ingest ---------------------------------------------------------------------
# INGEST_RUNS runs (their spread on a shared 2-vCPU VM is ±10 %): the median,
# and the slowest and fastest; every run must store every call it was sent.
: >"$T/rates"; loss=0; stored_all=0; sent_all=0
for r in $(seq "$INGEST_RUNS"); do
	"$B/ingero-collector" -q -o "$T/ingest.db" --no-bpf --stats "$T/ingest.txt" 2>/dev/null &
	CP=$!
	wait_socket
	"$B/tests/collector_send" bench --calls "$CALLS" --batch 4096 >"$T/sent.txt"
	sent=$(kv sent_calls "$T/sent.txt")
	kill -TERM $CP; wait $CP
	committed=$(kv calls_committed "$T/ingest.txt")
	stored=$(sqlite3 "$T/ingest.db" 'SELECT sum(calls) FROM call_blocks' 2>/dev/null)
	sent_all=$((sent_all + sent)); stored_all=$((stored_all + ${stored:-0})); loss=$((loss + sent - committed))
	awk -v n="$committed" -v s="$(kv ingest_s "$T/ingest.txt")" 'BEGIN {printf "%.0f\n", n / s}' >>"$T/rates"
	bytes=$(awk -v b="$(stat -c %s "$T/ingest.db")" -v n="$committed" 'BEGIN {printf "%.1f", b / n}')
	rm -f "$T"/ingest.db*
done
echo "ingest_runs=$INGEST_RUNS"
echo "ingest_calls_sent=$sent_all"
echo "ingest_calls_stored=$stored_all"
echo "ingest_loss=$loss"
echo "ingest_events_per_s=$(median <"$T/rates")"
echo "ingest_events_per_s_min=$(sort -n "$T/rates" | head -n 1)"
echo "ingest_events_per_s_max=$(sort -n "$T/rates" | tail -n 1)"
echo "ingest_db_bytes_per_call=$bytes"

# --- context switches -------------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
	: >"$T/base"; : >"$T/traced"; : >"$T/untraced"; : >"$T/traced_alt"; : >"$T/untraced_alt"
	# the ping-pong pins itself to CPU 0; the collector's user-space threads go to
	# CPU 1 so that what is measured on CPU 0 is the BPF programs' cost alone
	# (the consumer's cost is collector_cpu_pct)
	PIN=""
	[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null && PIN="taskset -c 1"
	# untraced COLLECTOR CMD...: CMD runs while COLLECTOR is up tracing
	# nothing (what every other process on the machine pays)
	untraced() {
		$PIN "$1" -q --force -o "$T/idle.db" --sample-hz 0 2>/dev/null &
		CP=$!
		shift
		wait_socket
		sleep 0.3
		"$@"
		kill -TERM $CP; wait $CP
	}
	# traced: the ping-pong run by the collector; untraced: a collector
	# running, the ping-pong not traced by it
	switches() { # collector, suffix
		$PIN "$1" -q --force -o "$T/pp.db" --sample-hz 0 -- "$B/tests/collector_pingpong" "$ROUNDS" \
			2>/dev/null | sed 's/ns_per_switch=//' >>"$T/traced$2"
		untraced "$1" "$B/tests/collector_pingpong" "$ROUNDS" | sed 's/ns_per_switch=//' >>"$T/untraced$2"
		rm -f "$T"/*.db*
	}
	for r in $(seq "$RUNS"); do
		"$B/tests/collector_pingpong" "$ROUNDS" | sed 's/ns_per_switch=//' >>"$T/base"
		switches "$B/ingero-collector" ""
		[ -n "${ALT_COLLECTOR:-}" ] && switches "$ALT_COLLECTOR" _alt
	done
	base=$(median <"$T/base"); traced=$(median <"$T/traced"); untraced=$(median <"$T/untraced")
	echo "switch_ns_baseline=$base"
	echo "bpf_ns_per_switch=$((traced - base))"
	echo "bpf_ns_per_switch_untraced=$((untraced - base))"
	if [ -n "${ALT_COLLECTOR:-}" ]; then
		echo "bpf_ns_per_switch_alt=$(($(median <"$T/traced_alt") - base))"
		echo "bpf_ns_per_switch_untraced_alt=$(($(median <"$T/untraced_alt") - base))"
	fi

	# --- page faults: the same pinning, runs interleaved -------------------------------
	: >"$T/fbase"; : >"$T/ftraced"; : >"$T/funtraced"
	for r in $(seq "$RUNS"); do
		"$B/tests/collector_faults" "$FAULT_ROUNDS" | sed 's/ns_per_fault=//' >>"$T/fbase"
		$PIN "$B/ingero-collector" -q -o "$T/f.db" --sample-hz 0 -- "$B/tests/collector_faults" \
			"$FAULT_ROUNDS" 2>/dev/null | sed 's/ns_per_fault=//' >>"$T/ftraced"
		untraced "$B/ingero-collector" "$B/tests/collector_faults" "$FAULT_ROUNDS" |
			sed 's/ns_per_fault=//' >>"$T/funtraced"
		rm -f "$T"/f.db* "$T"/idle.db*
	done
	fbase=$(median <"$T/fbase")
	echo "fault_ns_baseline=$fbase"
	echo "bpf_ns_per_fault=$(($(median <"$T/ftraced") - fbase))"
	echo "bpf_ns_per_fault_untraced=$(($(median <"$T/funtraced") - fbase))"

	# --- on-CPU samples: a traced Python thread 40 frames deep, sampled or not -----
	# (the BPF programs' run time with and without the sampler, so what is left is
	# the samples'; over the samples the trace stored)
	sample_cost() { # collector -> ns per sample, or nothing
		for hz in 999 0; do
			rm -f "$T"/s.db*
			INGERO_BPF_STATS=1 "$1" -q -o "$T/s.db" --sample-hz $hz -- python3 \
				tests/bench/python_deep.py "${SAMPLE_SECONDS:-3}" 40 >/dev/null 2>&1 || return
			sqlite3 "$T/s.db" "SELECT (SELECT value FROM session WHERE key = 'bpf_run_ns'),
				(SELECT count(*) FROM cpu_samples)" 2>/dev/null | tr '|' ' '
		done | awk 'NR == 1 { ns = $1; n = $2 } NR == 2 && n > 0 && $1 != "" { printf "%d\n", (ns - $1) / n }'
	}
	: >"$T/sample"; : >"$T/sample_alt"
	if command -v python3 >/dev/null; then
		for r in $(seq "$RUNS"); do
			sample_cost "$B/ingero-collector" >>"$T/sample"
			[ -n "${ALT_COLLECTOR:-}" ] && sample_cost "$ALT_COLLECTOR" >>"$T/sample_alt"
		done
	fi
	[ -s "$T/sample" ] && echo "bpf_ns_per_sample=$(median <"$T/sample")"
	[ -s "$T/sample_alt" ] && echo "bpf_ns_per_sample_alt=$(median <"$T/sample_alt")"
	rm -f "$T"/s.db*

	# --- the collector's own CPU while tracing the workload -------------------------
	"$B/ingero-collector" -q -o "$T/w.db" --stats "$T/w.txt" -- "$B/tests/starve" --mode workers \
		--workers 4 --batches 60 >/dev/null 2>&1
	echo "collector_cpu_pct=$(awk -v c="$(kv run_cpu_s "$T/w.txt")" -v w="$(kv run_wall_s "$T/w.txt")" 'BEGIN {printf "%.2f", 100 * c / w}')"
	echo "collector_kernel_records=$(kv kernel_records "$T/w.txt")"
	echo "collector_samples=$(sqlite3 "$T/w.db" 'SELECT count(*) FROM cpu_samples')"
else
	echo "# not root: bpf_ns_per_switch and collector_cpu_pct need eBPF"
fi
