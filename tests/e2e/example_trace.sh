#!/bin/sh
# example_trace.sh — the real H200 trace kept in examples/ (issue 8 item 4):
# DataLoader(shuffle=True, num_workers=4), 3M rows, traced with ingero-run on
# the GPU machine.  explain must find what the GPU run showed: the main thread
# blocked on its 4 DataLoader workers while no CUDA work is queued.
. tests/lib.sh
DB=examples/dataloader_workers4.db
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
"$B/ingero-analyze" explain "$DB" >"$T/explain.txt" 2>"$T/err.txt"
check_eq "explain exits 0 on the real trace" 0 $?
check "text names the HIGH chain" grep -q '^\[HIGH\] GPU idle' "$T/explain.txt"
check "text shows the 4 workers with their share of main's waiting" \
	test "$(grep -c 'worker .*share of main' "$T/explain.txt")" -eq 4
"$B/ingero-analyze" explain --json "$DB" >"$T/explain.json"
check_eq "explain --json exits 0" 0 $?
python3 - "$T/explain.json" >"$T/cmp.txt" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["chains"][0]
bad = []
if c["severity"] != "HIGH": bad.append("first chain not HIGH")
if c.get("kind") != "gaps_waiting_workers": bad.append("kind %s" % c.get("kind"))
if not (c["source"] or "").endswith("dataloader_starve.py:62"): bad.append("source %s" % c["source"])
if not any("num_workers=" in f for f in c["fixes"]): bad.append("no num_workers fix")
g = d["gpu_idle_pct"]
if not (90 <= g["low"] <= g["high"] <= 100): bad.append("gpu idle %s" % g)
print("\n".join(bad) or "fine")
sys.exit(1 if bad else 0)
PY
check_eq "explain --json: HIGH gaps_waiting_workers at dataloader_starve.py:62, num_workers fix, idle 90-100%" 0 $?
"$B/ingero-analyze" stats --json "$DB" | python3 -c '
import json, sys
d = json.load(sys.stdin)
kids = [p for p in d["processes"] if p["ppid"] == max(d["processes"], key=lambda p: sum(p["calls"].values()))["pid"]]
sys.exit(0 if len(kids) == 4 and all(p["context_switches"] > 0 and p["page_allocs"] > 0 for p in kids) else 1)'
check_eq "stats: 4 worker children with context switches and page allocations" 0 $?
finish
