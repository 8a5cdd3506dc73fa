#!/bin/sh
# analyzer_golden.sh — ingero-analyze on generated report.db files, one per
# starvation scenario (tests/helpers/gen_reportdb.c):
#   * explain's key facts (chains: severity, kind, API, source, fixes; GPU
#     idle bounds) and its full text equal tests/golden/analyzer_<scenario>.*
#   * scenario expectations that hold whatever the wording: the healthy trace
#     has no HIGH chain, the contention trace names num_workers for 4 CPUs, …
#   * the output does not depend on the order rows were stored in
#   * stats --json keeps the foundation contract (issue 2)
# UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing).
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
GEN=$B/tests/gen_reportdb
A=$B/ingero-analyze
G=tests/golden
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

facts() { # explain --json on stdin -> one fact per line
	python3 -c '
import json, sys
d = json.load(sys.stdin)
i = d["gpu_idle_pct"]
r = lambda v: "null" if v is None else "%.0f" % v
print("gpu_idle_pct", r(i["low"]), r(i["high"]), "estimate" if i["estimate"] else "exact")
for c in d["chains"]:
    print("chain", c["severity"], c["kind"], c["api"], c["source"])
    for f in c["fixes"]:
        print("  fix", f)
for p in d["processes"]:
    print("process", p["pid"], p["role"], p["comm"], "share=%.2f" % p.get("main_wait_share", 0))
'
}

for s in contention assembly blocked pageable syncstep healthy hostbound; do
	if ! "$GEN" "$s" "$T/$s.db" >/dev/null 2>"$T/gen.err"; then
		nok "generate $s ($(head -n1 "$T/gen.err"))"
		continue
	fi
	"$A" explain --json "$T/$s.db" >"$T/$s.json" 2>"$T/$s.err"
	check_eq "$s: explain --json exits 0" 0 $?
	facts <"$T/$s.json" >"$T/$s.facts"
	"$A" explain "$T/$s.db" >"$T/$s.txt" 2>>"$T/$s.err"
	check_eq "$s: explain exits 0" 0 $?
	check_eq "$s: nothing on stderr" "" "$(cat "$T/$s.err")"
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		cp "$T/$s.facts" "$G/analyzer_$s.facts"
		cp "$T/$s.txt" "$G/analyzer_$s.txt"
	fi
	if cmp -s "$T/$s.facts" "$G/analyzer_$s.facts"; then ok "$s: key facts match golden"
	else nok "$s: key facts differ from $G/analyzer_$s.facts"; diff "$G/analyzer_$s.facts" "$T/$s.facts" | head -n 20 | sed 's/^/# /'; fi
	if cmp -s "$T/$s.txt" "$G/analyzer_$s.txt"; then ok "$s: explain text matches golden"
	else nok "$s: explain text differs from $G/analyzer_$s.txt"; diff "$G/analyzer_$s.txt" "$T/$s.txt" | head -n 20 | sed 's/^/# /'; fi
done

# Expectations, independent of the golden files' wording.
expect() { # scenario description python-expression-on-d
	python3 - "$T/$1.json" "$3" <<'PY' >"$T/expect.out" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
ch = d["chains"]
high = [c for c in ch if c["severity"] == "HIGH"]
kinds = {c["kind"] for c in ch}
fixes = " ".join(f for c in ch for f in c["fixes"])
text = " ".join(c["summary"] + " " + c["root_cause"] for c in ch)
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
	check "$1: $2" test $? -eq 0
}
expect healthy "no HIGH chain, no chain at all" 'not high and not ch'
expect healthy "GPU idle under 10 %" 'd["gpu_idle_pct"]["high"] < 10'
expect contention "a HIGH chain" 'len(high) >= 1'
expect contention "num_workers=3 for 4 CPUs" '"num_workers=3" in fixes'
expect contention "no deeper prefetch for workers that have every CPU" 'not any("prefetch_factor=4" in f for c in ch if c["kind"] == "gaps_waiting_workers" for f in c["fixes"])'
expect contention "slow calls blamed on CPU contention, CPU 100%" 'any(c["kind"] == "slow_calls" and "CPU 100%" in c["summary"] and "contention" in c["root_cause"] for c in high)'
expect contention "main thread waits on workers in the gaps" '"gaps_waiting_workers" in kinds'
expect contention "woken, it waited for a CPU behind its workers first (schema 9 holders)" 'any(c["kind"] == "gaps_waiting_workers" and c["evidence"]["main_waited_behind"][0]["comm"] == "pt_data_worker" and "it waited for a CPU behind" in " ".join(c["timeline"]) for c in ch)'
expect assembly "HIGH: main thread on-CPU between CUDA calls" 'any(c["kind"] == "gaps_host_busy" for c in high)'
expect assembly "the gap's stacks: at::native::stack" '"at::native::stack" in text'
expect assembly "workers suggested from the CPU count (16 -> 15)" '"num_workers=15" in fixes'
expect assembly "the Python line ending the gaps" 'high[0]["source"] == "train.py:48"'
expect assembly "GPU idle bounds are an estimate above 90 %" 'd["gpu_idle_pct"]["estimate"] and d["gpu_idle_pct"]["low"] > 90'
expect blocked "HIGH: main thread blocked waiting for workers" 'any(c["kind"] == "gaps_waiting_workers" for c in high)'
expect blocked "each worker's share of main's waiting" 'all(abs(p["main_wait_share"] - 0.25) < 0.05 for p in d["processes"] if p["role"] == "worker")'
expect blocked "no contention claimed on 16 CPUs" '"slow_calls" not in kinds'
expect pageable "HIGH: pageable copies" 'any(c["kind"] == "pageable_copies" for c in high)'
expect pageable "pin_memory with measured bandwidths" '"pin_memory=True" in fixes and "52.2 GB/s" in fixes'
expect syncstep "a sync every step at train.py:57" 'any(c["kind"] == "sync_per_step" and c["source"] == "train.py:57" for c in ch)'
expect syncstep "no HIGH chain" 'not high'
expect hostbound "MEDIUM host_bound_launches, nothing HIGH (GPU idle inside is not measured)" 'not high and [(c["severity"], c["kind"]) for c in ch] == [("MEDIUM", "host_bound_launches")]'
expect hostbound "CUDA Graphs for the 31 launches of a step" '"torch.cuda.CUDAGraph" in fixes and "~31 launches" in fixes'
expect hostbound "the fused optimizer, from the sampled launch lines" '"fused=True" in fixes and ch[0]["source"] == "model.py:21"'
expect hostbound "evidence: launch rate, closing sync under the floor, period" 'abs(ch[0]["evidence"]["launches_per_s"] - 22000) < 1500 and ch[0]["evidence"]["closing_sync"]["wait_ns"] <= 20000 and ch[0]["evidence"]["period_calls"] == 32'
for s in contention assembly blocked pageable syncstep healthy; do
	expect "$s" "no host-bound chain" '"host_bound_launches" not in kinds'
done
# The same loop, but the sync after it waits 2 ms: the GPU was still busy,
# so nothing shows the host set the pace.
if [ -f "$T/hostbound.db" ]; then
	cp "$T/hostbound.db" "$T/gpubound.db"
	check_eq "gpubound: the last call made 2 ms long" 1 "$("$B/tests/calls_edit" "$T/gpubound.db" --last --dur 2000000)"
	"$A" explain --json "$T/gpubound.db" >"$T/gpubound.json" 2>/dev/null
	expect gpubound "sync after the loop waits 2 ms: no host-bound chain" '"host_bound_launches" not in kinds'
fi

# Row order: the same rows stored backwards give byte-identical output
# ("multichunk": > 500k rows per table, so the scans split into chunks and
# every thread's rows need sorting).  CUDA calls are backwards twice over:
# call blocks copied last first (new ids), then each block's calls reversed.
"$GEN" big "$T/multichunk.db" --calls 600000 --offcpu 600000 >/dev/null 2>&1 || nok "generate multichunk"
"$A" explain --json "$T/multichunk.db" >"$T/multichunk.json" 2>/dev/null
check_eq "multichunk: explain --json exits 0" 0 $?
for s in contention assembly multichunk; do
	[ -f "$T/$s.db" ] || continue
	rm -f "$T/rev.db"
	{
		echo "PRAGMA user_version=$(sqlite3 "$T/$s.db" 'PRAGMA user_version');"
		sqlite3 "$T/$s.db" .schema
		echo "ATTACH '$T/$s.db' AS o;"
		for tb in session apis processes threads off_cpu page_allocs cpu_busy competitors frames stacks \
			kernels cpu_samples losses; do
			echo "INSERT INTO main.$tb SELECT * FROM o.$tb ORDER BY rowid DESC;"
		done
		echo "INSERT INTO main.call_blocks(pid, first_ns, last_ns, calls, data)"
		echo "  SELECT pid, first_ns, last_ns, calls, data FROM o.call_blocks ORDER BY id DESC;"
	} | sed 's/^CREATE TABLE \([a-z_]*\)(.*) WITHOUT ROWID;/&/' >"$T/rev.sql"
	# WITHOUT ROWID tables have no rowid: order those by their first column, backwards.
	sed -i 's/\(INSERT INTO main\.\(session\|page_allocs\|cpu_busy\|competitors\|kernels\|losses\) SELECT \* FROM o\.[a-z_]*\) ORDER BY rowid DESC;/\1 ORDER BY 1 DESC;/' "$T/rev.sql"
	sqlite3 "$T/rev.db" <"$T/rev.sql" 2>"$T/rev.err" &&
		"$B/tests/calls_edit" "$T/rev.db" --reverse >"$T/rev.n" 2>>"$T/rev.err"
	check_eq "$s: reversed copy built" "" "$(cat "$T/rev.err")"
	DB=$T/$s.db
	first=$(q 'SELECT pid, tid, api, start_ns FROM cuda_calls ORDER BY rowid LIMIT 1')
	DB=$T/rev.db
	check_eq "$s: the reversed copy's last call is the first one" "$first" \
		"$(q 'SELECT pid, tid, api, start_ns FROM cuda_calls ORDER BY rowid DESC LIMIT 1')"
	check_eq "$s: every call reversed" "$(q 'SELECT count(*) FROM cuda_calls')" "$(cat "$T/rev.n")"
	"$A" explain --json "$T/rev.db" >"$T/rev.json" 2>/dev/null
	check "$s: explain --json identical with rows stored backwards" cmp -s "$T/$s.json" "$T/rev.json"
	"$A" stats --json "$T/$s.db" >"$T/a.json" 2>/dev/null
	"$A" stats --json "$T/rev.db" >"$T/b.json" 2>/dev/null
	check "$s: stats --json identical with rows stored backwards" cmp -s "$T/a.json" "$T/b.json"
done

# stats --json: the foundation contract and issue 4's additions.
"$A" stats --json "$T/contention.db" >"$T/stats.json"
check_eq "stats --json exits 0" 0 $?
python3 - "$T/stats.json" <<'PY' >"$T/contract.out" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["apis"]:
    for k in ("api", "count", "p50_ns", "p99_ns", "max_ns", "p90_ns", "mean_ns", "total_ns"):
        assert k in a, (k, a)
    assert a["p50_ns"] <= a["p90_ns"] <= a["p99_ns"] <= a["max_ns"], a
    if a["class"] == "copy":
        assert "pinned" in a and "pageable" in a and "gbps" in a["pinned"], a
for p in d["processes"]:
    for k in ("pid", "ppid", "comm", "calls", "context_switches", "off_cpu_ns", "runq_delay_p99_ns", "page_allocs", "cpu_ns"):
        assert k in p, (k, p)
main = [p for p in d["processes"] if p["role"] == "main"][0]
assert main["calls"]["cudaStreamSynchronize"] == 120, main["calls"]
assert sum(1 for p in d["processes"] if p["role"] == "worker") == 4
PY
check "stats --json contract keys and values" test $? -eq 0
[ -s "$T/contract.out" ] && sed 's/^/# /' "$T/contract.out"
finish
