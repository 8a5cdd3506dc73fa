#!/bin/sh
# tests/e2e/analyzer_corpus.sh — the real-trace corpus (tests/corpus/README.md), each trace
# analysed once, every view of that one analysis written (--also), and held to two things:
# * its expectation: NAME.expect against explain --json (tests/corpus/expect.py) — written
#   from the workload's class, not from what explain printed, so a failure here is the
#   analyzer disagreeing with an expert, not a golden diff;
# * one story, told the same everywhere (issue 39): each view says the same headline figures
#   in the same words — the line explain prints first (GPU idle of the steady state), the
#   window's line and the trace's line, from explain --json's "figures" (render/headline.h):
#   explain, stats, per-process (text and --json), the HTML report, the Perfetto export's
#   metadata, the MCP server's get_gpu_idle and get_causal_chains, and the gate's GPU-idle
#   check (its bounds; the trace's own saved baseline against itself: the gate's table is
#   the same as for the report.db twice, without analysing it twice more); within explain:
#   the verdict and the gaps finding quote the same range, the main thread's steady state
#   sums to the steady state, and every line fits 100 columns.
# (The two were separate tests, each analysing every trace: one analysis serves both.)
# CORPUS=DIR reads another folder (same layout: NAME.db.xz or NAME.db beside NAME.expect);
# ONLY=ERE picks traces by name.
# tests/run: pool (no clock it asserts on: run beside another test)
# tests/run: first (one of the pool's longest: started before the rest of it)
. "$(dirname "$0")/../lib.sh"
CORPUS=${CORPUS:-tests/corpus}
ONLY=${ONLY:-.}
A=$B/ingero-analyze
command -v python3 >/dev/null || { skip "corpus: python3 missing"; finish; }
command -v jq >/dev/null || { skip "corpus: jq missing"; finish; }
command -v xz >/dev/null || { skip "corpus: xz missing"; finish; }
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

one() { # one NAME.expect: its trace's views and expectation, in its own $T
	e=$1
	n=$(basename "$e" .expect)
	if [ -f "$CORPUS/$n.db.xz" ]; then db=$(corpus_db "$CORPUS/$n.db.xz" "$T/$n.db") || { nok "$n: unpack failed"; return; }
	elif [ -f "$CORPUS/$n.db" ]; then db=$CORPUS/$n.db
	else nok "$n: no trace $CORPUS/$n.db.xz"; return; fi
	# every view of one analysis (--also, cli/views.c: byte for byte each
	# subcommand's own output, analyzer_also.sh).  A job of several ranks:
	# explain's headline is the straggler's own analysis ("Rank N on its
	# own"), so every other view is asked for that rank (-p, the MCP tools'
	# pid): a second analysis; the gate has no -p: not compared then
	"$A" explain --json --compact "$db" --also explain="$T/explain80.txt" \
		--also stats="$T/stats.txt" --also stats-json="$T/stats.json" \
		--also per-process="$T/pp.txt" --also per-process-json="$T/pp.json" \
		--also html="$T/report.html" --also perfetto="$T/perfetto.json" \
		--also baseline="$T/base.json" >"$T/explain.json" 2>"$T/err" &&
		sp=$(jq -r '.ranks.straggler.pid // empty' "$T/explain.json") &&
		{ [ -z "$sp" ] || "$A" stats -p "$sp" --json --compact "$db" --also stats="$T/stats.txt" \
			--also per-process="$T/pp.txt" --also per-process-json="$T/pp.json" \
			--also html="$T/report.html" --also perfetto="$T/perfetto.json" >"$T/stats.json" 2>"$T/err"; } &&
		{ [ -n "$sp" ] || "$A" gate --verbose "$T/base.json" "$T/base.json" >"$T/gate.txt" 2>&1; }
	rc=$?
	check_eq "$n: every view runs" 0 "$rc"
	[ "$rc" -eq 0 ] || { sed 's/^/# /' "$T/err" | head -n 5; rm -f "$T/$n.db"; return; }
	python3 - "$A" "$db" "$T" "$n" "$sp" "$e" <<'EOF'
import html, json, os, re, subprocess, sys
sys.path.insert(0, "tests/corpus")
import expect
A, db, T, n, sp, e = sys.argv[1:7]
scope = {"pid": int(sp)} if sp else {}
def ok(cond, what, extra=""):
    print(("ok - " if cond else "not ok - ") + f"{n}: {what}" + ("" if cond or not extra else f" ({extra})"), flush=True)
ex = json.load(open(f"{T}/explain.json"))
expect.check_trace(n, e, ex, lambda passed, msg: print(("ok - " if passed else "not ok - ") + msg, flush=True))
fig = ex["figures"]
lines = [fig["trace_line"], fig["headline"]] + ([fig["window_line"]] if fig["window_line"] else [])
# each text view as a terminal shows it (80 columns): each line whole,
# wrapped only at spaces onto indented lines, so the same words in the
# same order
for view in ("explain80", "stats", "pp"):
    words = " ".join(open(f"{T}/{view}.txt").read().split())
    missing = [l for l in lines if " ".join(l.split()) not in words]
    ok(not missing, f"{view} (80 columns) prints the headline lines of explain --json, wrapped", missing[:1])
for view in ("stats", "pp"):
    j = json.load(open(f"{T}/{view}.json"))
    ok(j.get("figures") == fig, f"{view} --json carries explain's figures")
page = open(f"{T}/report.html").read()
def by_id(i):
    m = re.search(rf"id='{i}'>([^<]*)<", page)
    return html.unescape(m.group(1)) if m else None
ok(by_id("headline") == fig["headline"], "the HTML report's headline", by_id("headline"))
ok(by_id("trace") == fig["trace_line"], "the HTML report's trace line", by_id("trace"))
ok(by_id("window") == (fig["window_line"] or None), "the HTML report's window line", by_id("window"))
def other_data(path):   # the export writes otherData first: its head, not the whole (MBs) file
    head = open(path).read(1 << 16)
    try:
        return json.JSONDecoder().raw_decode(head, head.index('"otherData":') + len('"otherData":'))[0]
    except ValueError:
        return json.load(open(path))["otherData"]
od = other_data(f"{T}/perfetto.json")
ok((od.get("headline"), od.get("window_line"), od.get("trace_line")) == (fig["headline"], fig["window_line"],
   fig["trace_line"]), "the Perfetto export's metadata", od.get("headline"))
msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_gpu_idle", "arguments": scope}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_causal_chains", "arguments": scope}}]
p = subprocess.run([A, "mcp", db], input="".join(json.dumps(m) + "\n" for m in msgs).encode(), capture_output=True,
                   timeout=300)
r = {x.get("id"): x for x in map(json.loads, p.stdout.decode().splitlines())}
for i, tool in ((1, "get_gpu_idle"), (2, "get_causal_chains")):
    res = r.get(i, {}).get("result", {})
    sc = res.get("structuredContent") or {}
    ok(sc.get("figures") == fig, f"MCP {tool}: explain's figures")
    said = " ".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")
    ok(fig["headline"] in said, f"MCP {tool}: its summary quotes the headline", said[:160])
# the gate's GPU-idle check (issue 41: the steady state's, "about N%" where the estimate is
# there, else the bounds): the headline's figures
gi = fig["gpu_idle_steady_pct"]
gate = open(f"{T}/gate.txt").read() if not sp else ""
if sp:
    print(f"ok - # SKIP {n}: the gate has no -p: a job's straggler rank is not compared there", flush=True)
row = [l for l in gate.splitlines() if "GPU idle" in l and "steady state" in l]
if gi["text"] is not None and row:
    m = re.search(r"about (\d+)%", row[0])
    if m:
        said = re.search(r"about (\d+)%", gi["text"])   # as the headline prints it
        est = int(said.group(1)) if said else ex["gpu_idle_pct"].get("estimate_from_timed_work", {}).get("steady")
        exact = said is not None
        ok(est is not None and abs(int(m.group(1)) - round(est)) <= (0 if exact else 1),
           "the gate's GPU-idle check shows the headline's estimate", (row[0].strip()[:90], gi["text"]))
    else:
        b = re.match(r"(\d+)(?:-(\d+))?%", gi["text"])
        want = "%s-%s%%" % (b.group(1), b.group(2) or b.group(1))
        ok(want in row[0], "the gate's GPU-idle check shows the headline's bounds", (want, row[0].strip()[:90]))
elif gi["text"] is not None and not sp:
    ok(False, "the gate has a GPU-idle check", gate[-300:])
# inside explain: the same range in the verdict and the gaps finding
rng = re.search(r"GPU idle (\d+(?:-\d+)?%(?: \(about \d+%\))?) of the steady state", fig["headline"])
if rng:
    v = ex["verdict"]["text"]
    ok(ex["verdict"]["state"] in ("none", "unknown") or rng.group(1) in v, "the verdict quotes the headline's range",
       v[:120])
    for c in ex["chains"]:
        if c["kind"].startswith("gaps_"):
            ok(c["summary"].startswith("GPU idle " + rng.group(1) + " of the steady state"),
               "the gaps finding quotes the headline's range", c["summary"][:100])
m = fig["main_thread_steady_ns"]
if m:
    s = sum(m.values())
    ok(abs(s - fig["steady_ns"]) <= 0.01 * fig["steady_ns"], "the main thread's parts sum to the steady state",
       (s, fig["steady_ns"]))
for view in ("explain80", "stats", "pp"):
    wide = [l for l in open(f"{T}/{view}.txt").read().splitlines() if len(l) > 100]
    ok(not wide, f"{view} fits 100 columns", wide[:1])
EOF
	rm -f "$T/$n.db"   # (a trace of tests/corpus/ is shared: corpus_db)
}
if [ "${1:-}" = --one ]; then one "$2"; exit 0; fi
# every trace has its expectation
for x in "$CORPUS"/*.db.xz; do
	[ -f "$x" ] || continue
	n=$(basename "$x" .db.xz)
	echo "$n" | grep -Eq -- "$ONLY" && [ ! -f "$CORPUS/$n.expect" ] && nok "$n: a trace without $n.expect"
done
# the traces two at a time (each_parallel, lib.sh): the pool's longest test
set --
for e in "$CORPUS"/*.expect; do
	[ -f "$e" ] && echo "$(basename "$e" .expect)" | grep -Eq -- "$ONLY" && set -- "$@" "$e"
done
check_ge "corpus: traces with expectations" "$#" 1
each_parallel "$0" "$@"
finish
