#!/bin/sh
# analyzer_loader.sh — a loop waiting on its DataLoader workers (two
# processes running the stand-ins of torch's worker loop and fetcher) is
# told apart by how the workers load: blocked in their Dataset's code (a
# sleep per item, a request per item to a store process) is I/O-bound
# loading — the workers' blocked time loading, what it was in and the line
# it blocked at come from the stacks of their blocks (off_cpu_stacks), and
# the fixes overlap the waits (more workers than CPUs, concurrent fetches);
# on CPUs (Python work per item) is the CPU-bound cause it always was.  The
# workers' wait for their next index (a loop busy on the host) is blocked
# time too, and never counts as loading.
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
if [ "$(uname -m)" != x86_64 ]; then skip "system call numbers are read on x86_64 only"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_loader.py
first_kind() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["chains"][0]["kind"])' "$1"; }

for m in "sleep LOAD_SLEEP clock_nanosleep asleep The_Dataset_sleeps_at" \
	"socket LOAD_RECV recvfrom on_a_socket,_a_pipe_or_a_file_descriptor Fetch_items_concurrently"; do
	set -- $m
	mode=$1 at=$(marker_line "$PY" "$2") name=$3 said=$(echo "$4" | tr _ ' ') fix=$(echo "$5" | tr _ ' ')
	explain_run "$mode" 500 99 "$PY" "$mode" 400
	grep -A12 "^\[[A-Z]*\] GPU idle" "$T/$mode.txt" | sed 's/^/# /'
	check_eq "$mode: the first chain: waiting for the workers" gaps_waiting_workers "$(first_kind "$T/$mode.json")"
	check "$mode: the root cause says the loading waits on I/O, $said, in $name" \
		grep -q "Root cause: Data loading is slower than the GPU, and it waits on I/O: .* — $said.*, in $name\." \
		"$T/$mode.txt"
	check "$mode: it names the line the workers blocked at (python_loader.py:$at)" \
		grep -q "They blocked at $PY:$at" "$T/$mode.txt"
	check "$mode: the Source is that line" grep -q "^  Source: $PY:$at\$" "$T/$mode.txt"
	check "$mode: the first fix: more workers than the 2 now, past the CPUs" \
		grep -Eq "1\. More workers: num_workers=[0-9]+ \(2 now\) — they wait on I/O rather than use CPUs" "$T/$mode.txt"
	check "$mode: the second fix: $fix" grep -q "2\. $fix" "$T/$mode.txt"
	check "$mode: not the CPU-bound advice" sh -c "! grep -Eq 'produce batches slower|per-item work such as' '$T/$mode.txt'"
	check "$mode: the timeline says where they blocked loading" \
		grep -q "^    \[HOST\] where they blocked loading ([0-9,]* of [0-9,]* stacks of their blocks in the gaps): $PY:$at " \
		"$T/$mode.txt"
	check "$mode: the verdict says what the workers waited on" \
		grep -q "^Verdict: .*The cause: the main thread waiting for DataLoader workers, whose loading waits " "$T/$mode.txt"
	check "$mode: --json: loading most of the workers' blocked time, at that line, in $name" \
		python3 - "$T/$mode.json" "python_loader.py:$at" "$name" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
assert g["workers_loading_blocks_sampled"] >= 20, g
assert g["workers_loading_blocked_ns"] >= 0.8 * g["workers_blocked_ns"], g
assert g["workers_loading_blocked_ns"] > g["workers_oncpu_ns"], g
# (most, not 80 %: a clean clone's loaded run had one 0.9 s block of a worker at another line,
# 27 % of the time by duration, beside 72 of 73 blocks at this one)
assert g["workers_blocked_at"][0]["line"].endswith(sys.argv[2]) and g["workers_blocked_at"][0]["share"] > 0.5, g
assert sys.argv[3] in [b["syscall"] for b in g["workers_blocked_in"]], g
PYEOF
	pids=$(q "SELECT group_concat(DISTINCT pid) FROM threads WHERE comm = 'pt_data_worker'")
	check_ge "$mode: stacks of the workers' blocks stored" \
		"$(q "SELECT count(*) FROM off_cpu_stacks WHERE pid IN ($pids)")" 20
done

# Python work per item: the workers load on CPUs
explain_run cpu 500 99 "$PY" cpu 400
grep -A12 "^\[[A-Z]*\] GPU idle" "$T/cpu.txt" | sed 's/^/# /'
check_eq "cpu: the first chain: waiting for the workers" gaps_waiting_workers "$(first_kind "$T/cpu.json")"
check "cpu: the CPU-bound cause" \
	grep -q "Root cause: Data loading is slower than the GPU: the main thread was blocked .* workers produce batches slower" \
	"$T/cpu.txt"
check "cpu: no I/O said" sh -c "! grep -Eq 'waits on I/O|where they blocked loading' '$T/cpu.txt'"
check "cpu: the workers' Python line is the Source" \
	grep -q "^  Source: $PY:$(marker_line "$PY" LOAD_SPIN)\$" "$T/cpu.txt"

# one slow batch in 16, taken in order: head-of-line blocking — rare long waits, the other
# workers idle; the fixes are the slow item and in_order=False, not more workers
explain_run slow 500 99 "$PY" slow 400
grep -A16 "^\[[A-Z]*\] GPU idle" "$T/slow.txt" | sed 's/^/# /'
check_eq "slow: the first chain: waiting for the workers" gaps_waiting_workers "$(first_kind "$T/slow.json")"
check "slow: head-of-line blocking said" grep -q "(head-of-line blocking)" "$T/slow.txt"
check "slow: the idle said to come in bursts" grep -q "\[CUDA\] the idle comes in bursts: [0-9]* gaps of" "$T/slow.txt"
check "slow: the first fix: the slow items, at the workers' line" \
	grep -q "1\. Find the slow items and make them cheap — the workers' time is most in .*$PY:$(marker_line "$PY" LOAD_SLOW)" \
	"$T/slow.txt"
check "slow: the second fix: in_order=False" grep -q "2\. DataLoader(..., in_order=False)" "$T/slow.txt"
check "slow: not more workers" sh -c "! grep -Eq 'More workers|more workers would' '$T/slow.txt'"
check "slow: --json: most of the gap time in the long gaps, one worker at a time" python3 - "$T/slow.json" <<'PYEOF'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["chains"] if c["kind"] == "gaps_waiting_workers"][0]
assert c["evidence"]["long_waits_share"] >= 0.6 and c["evidence"]["long_waits_one_worker"] >= 0.6, c["evidence"]
PYEOF

# no workers: the loop fetches its batches itself (num_workers=0), the user's __getitem__ under the
# DataLoader's fetch on the main thread: the fix is workers, at the Dataset's line
explain_run inline 500 99 "$PY" inline 150
grep -A14 "^\[[A-Z]*\] GPU idle" "$T/inline.txt" | sed 's/^/# /'
check_eq "inline: the first chain: the host busy" gaps_host_busy "$(first_kind "$T/inline.json")"
check "inline: said to be made under the DataLoader's fetch in the main process" \
	grep -q "of those samples are under a DataLoader's fetch (torch.utils.data): the Dataset's items are made in the main process" \
	"$T/inline.txt"
check "inline: the first fix: workers, at the Dataset's line" \
	grep -q "1\. Load in worker processes: DataLoader(..., num_workers=[0-9]*, .* the most at $PY:$(marker_line "$PY" LOAD_INLINE)" \
	"$T/inline.txt"

# nothing to load: the workers wait for their next index the whole time,
# in torch's worker loop (their forked stacks still end in the script's
# loop line) — blocked, and none of it loading
explain_run idle 500 99 "$PY" idle 300
grep -A8 "^\[[A-Z]*\] GPU idle" "$T/idle.txt" | sed 's/^/# /'
check_eq "idle: the first chain: the host busy" gaps_host_busy "$(first_kind "$T/idle.json")"
check "idle: no waiting on workers, no I/O said" \
	sh -c "! grep -Eq 'waiting for workers|waits on I/O|blocked loading' '$T/idle.txt'"
check "idle: --json: the workers blocked, sampled, and none of it loading" python3 - "$T/idle.json" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
assert g["workers_blocks_sampled"] >= 20 and g["workers_blocked_ns"] >= 0.5 * g["total_ns"], g
assert g["workers_loading_blocked_ns"] <= 0.05 * g["workers_blocked_ns"], g
PYEOF
finish
