#!/bin/sh
# perfetto_viewer.sh — the Perfetto export loads in a trace viewer from npm
# (issue 39): speedscope (pinned in tests/viewer/package.json, installed
# from the npm registry into build/tests/viewer/ once and reused while that
# file is unchanged) opens three real traces' exports in headless Chromium,
# a real job's of four ranks over gloo with its collectives drawn (c48), and
# — as root, where collectors can run — the export of two nodes of one job
# (tests/helpers/two_nodes.sh: two collectors, the second's clock skewed,
# 4 ranks over the fake NCCL; `export A.db B.db`, as analyzer_nodes.sh).
# The trace is handed over the way speedscope's own command line does it: a
# script file that calls speedscope.loadFileFromBase64(NAME, BASE64), named
# by index.html#localProfilePath=FILE (file://, no server, no network).
# Chromium's --dump-dom (after --virtual-time-budget lets the import run)
# gives the page; its console goes to stderr (--enable-logging).  An 800x600
# window: speedscope draws its flame graph with WebGL, which headless
# Chromium emulates on the CPU (SwiftShader) — 1400x900 cost ~1 CPU-second
# more a view, for checks that read the page's text.  Checked:
#   * speedscope imported the file as Trace Event Format (its console line)
#     and shows no import error ("Something went wrong", "Unrecognized
#     format", an uncaught exception) — the collectives' flows (ph s/f)
#     included;
#   * the page's title is the file's name (a profile is open), the profile
#     selector counts one profile per track with slices (pid, tid), and
#     lists each of them by the export's own process and thread names
#     ("python3 [main] (pid P), GPU (measured) (tid T)"; with two nodes
#     "node 1 (host) · rank 3 · ranks [main] (pid P) (pid N), collectives
#     (rank 3) (tid T)"): the viewer read the metadata and the slices, not
#     just the file; one GPU track a node; with collectives, each rank's
#     collectives track listed under its own process (its node's, with
#     several);
#   * the CUDA-call tracks nest cleanly: none of speedscope's "Tried to end
#     ..." warnings names a CUDA call.  (Its warnings about the off-CPU, GPU
#     and collectives tracks are printed as "# " lines, not failed:
#     speedscope adds ts + dur in floating point after rebasing each track,
#     so a slice that ends exactly where the next one starts, or where its
#     nested tail ends, can come out a rounding step off and be mis-nested
#     there.)
# No node, npm, registry or chromium is a failure, not a skip: this test is
# the proof that a viewer from npm reads the export.
# tests/run: pool (no clock it asserts on: run beside another test)
# tests/run: first (one of the pool's longest: started before the rest of it)
. "$(dirname "$0")/../lib.sh"
A=$B/ingero-analyze
V=$B/tests/viewer
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

CHROME=$(command -v chromium || command -v chromium-browser || true)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1 || [ -z "$CHROME" ] ||
   ! command -v python3 >/dev/null 2>&1; then
	nok "node, npm, chromium and python3 are needed for the trace-viewer test (Debian: apt-get install nodejs npm chromium)"
	finish
fi
npm_pinned tests/viewer/package.json "$V" node_modules/speedscope/dist/release/index.html speedscope || finish
SS=$(cd "$V/node_modules/speedscope" && pwd)
ok "speedscope $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$SS/package.json" | head -n 1) in $V"
TA=$(cd "$T" && pwd)

# view NAME: speedscope opens $T/NAME.json in headless Chromium; the checks above
view() {
	n=$1
	# what speedscope's command line writes for `speedscope FILE`
	node -e 'const fs = require("fs"), [src, dst, name] = process.argv.slice(1);
fs.writeFileSync(dst, `speedscope.loadFileFromBase64(${JSON.stringify(name)}, ${JSON.stringify(fs.readFileSync(src).toString("base64"))})`)' \
		"$T/$n.json" "$TA/$n.js" "$n.json" || { nok "$n: the loader script"; return; }
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu $CHROME_LEAN --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$T/profile.$n" \
		--enable-logging=stderr --v=0 --virtual-time-budget=20000 --window-size=800,600 \
		--dump-dom "file://$SS/dist/release/index.html#localProfilePath=$TA/$n.js" >"$T/$n.dom" 2>"$T/$n.err"
	check "$n: Chromium dumped speedscope's page" test -s "$T/$n.dom"
	rm -f "$TA/$n.js"
	python3 - "$T/$n.json" "$T/$n.dom" "$T/$n.err" "$n" <<'PY'
import collections, html, json, re, sys
path, dom, err, n = sys.argv[1:5]
def ok(what, cond, extra=""):
    print(("ok - " if cond else "not ok - ") + f"{n}: {what}" + ("" if cond or not extra else f" ({extra})"), flush=True)
d = json.load(open(path))
page = open(dom, encoding="utf-8", errors="replace").read()
text = html.unescape(re.sub(r"<[^>]+>", "\n", page))
console = [m.group(1) for m in re.finditer(r':CONSOLE[^\]]*\] "(.*)", source: ', open(err, errors="replace").read())]
errors = [l for l in open(err, errors="replace") if "Uncaught" in l]
ok("speedscope imported it as Trace Event Format", "Importing as Trace Event Format profile" in console, console[:5])
bad = [s for s in ("Something went wrong", "Unrecognized format", "Failed to load") if s in text]
ok("no import error on the page, no uncaught exception", not bad and not errors, (bad + errors)[:3])
title = re.search(r"<title>(.*?)</title>", page, re.S)
ok("a profile is open (the page's title is the file's name)", title and html.unescape(title.group(1)).strip() == f"{n}.json - speedscope",
   title and title.group(1))
# speedscope names a profile "<process_name> (pid P), <thread_name> (tid T)"
proc, thr, tracks, names = {}, {}, collections.Counter(), collections.defaultdict(set)
for e in d["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "process_name":
        proc[e["pid"]] = e["args"]["name"]
    elif e["ph"] == "M" and e["name"] == "thread_name":
        thr[(e["pid"], e["tid"])] = e["args"]["name"]
    elif e["ph"] in ("X", "B", "E"):
        tracks[(e["pid"], e["tid"])] += 1
        names[(e["pid"], e["tid"])].add(e["name"])
want = {f"{proc[p]} (pid {p}), {thr[(p, t)]} (tid {t})" for p, t in tracks if p in proc and (p, t) in thr}
ok("every track with slices is named by the export's process and thread names", len(want) == len(tracks), len(tracks) - len(want))
shown = set(l.strip() for l in text.splitlines())
miss = sorted(want - shown)
ok(f"speedscope lists all {len(want)} tracks by those names", not miss, miss[:3])
m = re.search(r"\(1/(\d+)\)", text)
ok("its profile selector counts one profile per track", m and int(m.group(1)) == len(tracks), m and m.group(0))
nodes = d["otherData"].get("nodes", [None])
gpu = [w for w in want if re.search(r", GPU \((measured|estimate)[^,]*\(tid \d+\)$", w)]
ok(f"one GPU track a node ({len(nodes)}) among them", len(gpu) == len(nodes), gpu)
# the collectives: each rank's track listed under its own process ("node K (host) · rank R · ..." with several)
coll = {(p, t): v for (p, t), v in thr.items() if v.startswith("collectives") and (p, t) in tracks}
if d["otherData"].get("collectives"):
    rank = {k: int(re.search(r"rank (\d+)", v).group(1)) for k, v in coll.items()}
    ranks = sorted(rank.values())
    rank_procs = {p: v for p, v in proc.items() if re.search(r" · rank \d+ · ", v)}
    ok(f"each rank's collectives track ({len(coll)}) is listed under its process", coll and all(
        f"{proc[p]} (pid {p}), {v} (tid {t})" in shown and (not nodes[0] or " · rank %d · " % rank[(p, t)] in proc[p])
        for (p, t), v in coll.items()) and len(set(ranks)) == len(ranks), sorted(coll.values()))
    if nodes[0]:
        per_node = collections.defaultdict(set)
        for p, v in rank_procs.items():
            m = re.match(r"node (\d+) \((.*?)\) · rank (\d+) · ", v)
            if m and any(f"{v} (pid {p}), " in w for w in shown):
                per_node[int(m.group(1))].add(int(m.group(3)))
        ok("each node's ranks listed by their process names (node K (host) · rank R · ...)",
           len(per_node) == len(nodes) and sorted(r for v in per_node.values() for r in v) == ranks,
           dict(per_node))
# speedscope's nesting warnings: none on a CUDA-call track; the others, counted
warn = collections.Counter()
# the CUDA calls' tracks: a thread's own, not off-CPU, not the GPU's, not the collectives'
calls = set().union(*[v for k, v in names.items() if k in thr and not thr[k].startswith("GPU")
                      and not thr[k].endswith("off-CPU") and not thr[k].startswith("collectives")])
cuda = []
for c in console:
    w = re.match(r'ts=\S+: Tried to end "(.*?)(?: \{.*)?" when "(.*?)(?: \{.*)?" was on the top', c)
    if w:
        warn[(w.group(1), w.group(2))] += 1
        if w.group(1) in calls or w.group(2) in calls:
            cuda.append(c)
ok(f"no CUDA call mis-nested in speedscope ({len(calls)} names on the calls' tracks)", calls and not cuda, cuda[:2])
for (a, b), k in sorted(warn.items(), key=lambda x: -x[1]):
    print(f"# {n}: speedscope: {k} x tried to end '{a}' with '{b}' on top (float ts + dur, see the header)")
PY
}

for n in c01_cnn_workers2 c39_prefetch_thread c42_fresh_host_buffer c48_ddp_gloo_4ranks_transform; do
	x=tests/corpus/$n.db.xz
	[ -f "$x" ] || { nok "$n: not in the corpus"; continue; }
	sh tests/corpus/unpack.sh "$x" "$T/$n.db" || { nok "$n: unpack"; continue; }
	"$A" export --format perfetto -o "$T/$n.json" "$T/$n.db"
	check_eq "$n: export runs" 0 $?
	rm -f "$T/$n.db"
	view "$n"
done
# two nodes of one job, one file: as root (the collectors' eBPF)
if is_root; then
	. tests/helpers/two_nodes.sh
	mkdir -p "$T/job"
	two_nodes "$T/job"
	check_eq "two_nodes: both nodes' jobs and collectors exit 0" "0 0" "$TWO_NODES_RC"
	"$A" export --format perfetto -o "$T/two_nodes.json" "$T/job/n0.db" "$T/job/n1.db"
	check_eq "two_nodes: export of both runs" 0 $?
	view two_nodes
else
	skip "two_nodes: the two nodes' traces need root (collectors)"
fi
finish
