#!/bin/sh
# foundation.sh — the whole data path, real at every step, checked against
# the workload's own ground truth:
#   starve (fake CUDA) → libingero_preload.so → nng → ingero-collector
#   (+ eBPF sched_switch/fork) → report.db → ingero-analyze stats --json
# Needs root (eBPF).  Every count must match exactly: a broken shim, a
# broken fork path or a failed BPF attach makes this fail.
. tests/lib.sh
if ! is_root; then skip "foundation end-to-end needs root for eBPF"; finish; fi

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
TRUTH=$T/truth.txt
export INGERO_ENDPOINT="ipc://$T/ingero.sock"

INGERO_BPF_STATS=1 "$B/ingero-collector" -o "$DB" -- "$B/tests/starve" --mode workers --workers 4 \
	--batches 40 --rows 16384 --array-mb 64 --truth "$TRUTH" >"$T/out.txt" 2>"$T/err.txt"
rc=$?
check_eq "collector exits with the workload's exit code" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err.txt" | tail -n 20
check "report.db exists" test -s "$DB"
check_ge "BPF run time stored per program (sched_switch's)" "$(q "SELECT count(*) FROM session WHERE key = 'bpf_run_ns.on_switch' AND CAST(value AS INTEGER) > 0")" 1
# the tracer's own threads (the preload's "ingero-…", nng's "nng:…") are not the program's
# evidence: at most the wait before a thread first ran, before it named itself
own="t.comm LIKE 'ingero-%' OR t.comm LIKE 'nng:%'"
check_ge "the tracer's own threads are in the threads table" "$(q "SELECT count(*) FROM threads t WHERE $own")" 1
check_ge "no off-CPU interval of the tracer's own threads past their first" \
	"$(q "SELECT count(*) FROM threads t WHERE $own")" "$(q "SELECT count(*) FROM off_cpu o JOIN threads t ON t.tid = o.tid WHERE $own")"
# (a sample can land in the microseconds between a thread's start and its
# naming itself: the clean-clone run at f9785c7 had one, under load)
check_ge "no on-CPU sample of the tracer's own threads past one before it named itself" 1 \
	"$(q "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM cpu_samples o JOIN threads t ON t.tid = o.tid
	      WHERE $own GROUP BY o.tid)")"
check_eq "schema version" "$SCHEMA_VERSION" "$(q 'PRAGMA user_version')"
check_eq "truth has the parent and 4 workers" 5 "$(wc -l <"$TRUTH" | tr -d ' ')"

# Every process, every API: the stored count equals what the process says it made.
main_pid=$(sed -n 's/^pid=\([0-9]*\) .*role=main.*/\1/p' "$TRUTH")
while read -r line; do
	pid=$(echo "$line" | sed 's/^pid=\([0-9]*\).*/\1/')
	ppid=$(echo "$line" | sed 's/.* ppid=\([0-9]*\).*/\1/')
	role=$(echo "$line" | sed 's/.* role=\([a-z]*\).*/\1/')
	for kv in $(echo "$line" | tr ' ' '\n' | grep -E '^(cuda|cu[A-Z]|__cuda)[A-Za-z0-9_]*=[0-9]+$'); do
		api=${kv%%=*}
		want=${kv#*=}
		got=$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id = c.api WHERE c.pid = $pid AND a.name = '$api'")
		check_eq "$role $pid: $api calls stored" "$want" "$got"
	done
	check_eq "$role $pid: parent in the process tree" "$ppid" "$(q "SELECT ppid FROM processes WHERE pid = $pid")"
	check_ge "$role $pid: off-CPU intervals recorded" "$(q "SELECT count(*) FROM off_cpu WHERE pid = $pid")" 1
	check_eq "$role $pid: nothing dropped" 0 "$(q "SELECT coalesce(sum(count),0) FROM losses WHERE pid = $pid")"
done <"$TRUTH"
check_eq "workers are the main process's children" 4 "$(q "SELECT count(*) FROM processes WHERE ppid = $main_pid")"
# the tracer's own BPF cost, measured by the kernel when asked
# (INGERO_BPF_STATS=1): as many runs as at least the off-CPU intervals
# stored (each came from a sched_switch run)
check_ge "BPF programs' runs counted" "$(q "SELECT value FROM session WHERE key = 'bpf_runs'")" \
	"$(q "SELECT count(*) FROM off_cpu")"
check_ge "BPF programs' run time stored" "$(q "SELECT value FROM session WHERE key = 'bpf_run_ns'")" 1
"$B/ingero-analyze" stats --width 400 "$DB" >"$T/stats.txt"
check "stats says what the BPF programs cost" \
	grep -q "^Tracer's BPF programs: .* in [0-9,]* runs, [0-9.]*% of one CPU over the .* traced$" "$T/stats.txt"

# The analyzer's JSON contract agrees with the truth, API by API.
"$B/ingero-analyze" stats --json "$DB" >"$T/stats.json"
check_eq "stats --json exits 0" 0 $?
python3 - "$T/stats.json" "$TRUTH" <<'EOF' >"$T/cmp.txt" 2>&1
import json, re, sys
stats = json.load(open(sys.argv[1]))
truth = {}
procs = {}
for line in open(sys.argv[2]):
    kv = dict(f.split("=", 1) for f in line.split())
    pid = int(kv["pid"])
    procs[pid] = kv
    for k, v in kv.items():
        if re.match(r"^(cuda|cu[A-Z]|__cuda)", k):
            truth[k] = truth.get(k, 0) + int(v)
apis = {a["api"]: a for a in stats["apis"]}
bad = 0
for api, n in truth.items():
    if n == 0:
        continue
    got = apis.get(api, {}).get("count")
    if got != n:
        print(f"api {api}: expected {n}, got {got}"); bad += 1
    a = apis.get(api, {})
    if not all(k in a for k in ("p50_ns", "p99_ns", "max_ns")) or not (a["p50_ns"] <= a["p99_ns"] <= a["max_ns"]):
        print(f"api {api}: percentiles missing or out of order: {a}"); bad += 1
sp = {p["pid"]: p for p in stats["processes"]}
for pid, kv in procs.items():
    p = sp.get(pid)
    if p is None:
        print(f"process {pid} missing"); bad += 1; continue
    if p["ppid"] != int(kv["ppid"]):
        print(f"process {pid}: ppid {p['ppid']} != {kv['ppid']}"); bad += 1
    for k, v in kv.items():
        if re.match(r"^(cuda|cu[A-Z]|__cuda)", k) and int(v) != p["calls"].get(k, 0):
            print(f"process {pid}: {k} {p['calls'].get(k, 0)} != {v}"); bad += 1
    if p["context_switches"] < 1 or p["off_cpu_ns"] <= 0:
        print(f"process {pid}: no scheduler evidence {p}"); bad += 1
print("mismatches", bad)
sys.exit(1 if bad else 0)
EOF
rc=$?
check_eq "stats --json matches the workload's truth" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/cmp.txt" | head -n 20

# The collector passes the command's output through and returns its exit code.
out=$("$B/ingero-collector" -o "$T/b.db" -- sh -c 'echo through; exit 7' 2>/dev/null)
rc=$?
check_eq "stdout passes through untouched" "through" "$out"
check_eq "exit code of the command is the collector's" 7 "$rc"
finish
