#!/bin/sh
# analyzer_perfetto.sh — the Perfetto export is well formed (issue 39), on
# real traces (with GPU marks) and a generated one (without):
#   * on every track (pid, tid), complete slices are disjoint or nested,
#     never partly overlapping — the "GPU (measured)" track above all;
#   * every flow is bound to its two slices by id: one flow_out, one
#     flow_in per bind_id, on complete slices of the same thread, the
#     source ending no later than the sync it flows into starts;
#   * the tracer's own threads (ingero-*, nng:*) are left out;
#   * with GPU marks, the stream tracks of work timed alone have named
#     slices, inside the window;
#   * otherData carries explain's headline (a job's explain has its
#     straggler's own: there, the trace's headline is only present);
#   * the collectives: none drawn where the trace has none (no track, no
#     slice, no flow matched by timestamp, nothing in otherData); in a file
#     of several ranks (c48: DDP over gloo, 4 ranks on the H200, rank 3
#     slow) each rank's collectives track, its slices' args and the flows
#     from the last rank to the others against explain; a one-rank NCCL
#     group (c50) one slice a stored collective, no flow
#     (tests/helpers/perfetto_collectives.py).
# tests/run: pool (no clock it asserts on: run beside another test)
. "$(dirname "$0")/../lib.sh"
A=$B/ingero-analyze
command -v python3 >/dev/null || { skip "perfetto: python3 missing"; finish; }
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

check_export() { # NAME DB
	"$A" export --format perfetto -o "$T/$1.json" "$2" && "$A" explain --json --compact "$2" >"$T/$1.explain.json"
	check_eq "$1: export and explain run" 0 $?
	python3 - "$T/$1.json" "$T/$1.explain.json" "$1" <<'EOF'
import collections, json, sys
path, ex, n = sys.argv[1:4]
def ok(cond, what, extra=""):
    print(("ok - " if cond else "not ok - ") + f"{n}: {what}" + ("" if cond or not extra else f" ({extra})"), flush=True)
d = json.load(open(path))
ex = json.load(open(ex))
ev = d["traceEvents"]
names, tracks = {}, collections.defaultdict(list)
for e in ev:
    if e["ph"] == "M" and e["name"] == "thread_name":
        names[(e["pid"], e["tid"])] = e["args"]["name"]
    if e["ph"] == "X":
        tracks[(e["pid"], e["tid"])].append(e)
bad = []
for k, sl in tracks.items():
    sl.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    ends = []
    for e in sl:
        a, b = e["ts"], e["ts"] + e.get("dur", 0)
        while ends and ends[-1] <= a + 1e-6:
            ends.pop()
        if ends and b > ends[-1] + 1e-6:
            bad.append((names.get(k, k), e["name"], a))
        ends.append(b)
ok(not bad, "no slice partly overlaps another on its track", bad[:3])
gpu = [k for k, v in names.items() if v.startswith("GPU (")]
ok(len(gpu) == 1 and tracks.get(gpu[0]), "one GPU track with slices", [names[k] for k in gpu])
fo, fi = {}, {}
for e in ev:
    if "bind_id" in e:
        ok_kind = e["ph"] == "X"
        (fo if e.get("flow_out") else fi).setdefault(e["bind_id"], []).append(e)
        if not ok_kind:
            bad.append(e)
pairs = [k for k in fo if len(fo[k]) == 1 and len(fi.get(k, [])) == 1]
ok(fo and len(pairs) == len(fo) == len(fi), "every flow has one source and one target slice", (len(fo), len(fi), len(pairs)))
wrong = [k for k in pairs if (fo[k][0]["pid"], fo[k][0]["tid"]) != (fi[k][0]["pid"], fi[k][0]["tid"])
         or fo[k][0]["ts"] > fi[k][0]["ts"]]
ok(not wrong, "a flow runs from queued work to a later sync of the same thread", wrong[:3])
coll = [e for e in ev if e.get("cat") == "collective"]
if "collectives" not in d["otherData"]:
    ok(not any(e["ph"] in ("s", "t", "f") for e in ev), "no flow matched by timestamp (ph s/t/f)")
    ok(not coll and not [v for v in names.values() if v.startswith("collectives")], "no collectives: no track, no slice")
else:
    ok(all(e["ph"] in ("X", "s", "f") for e in coll) and not any(e["ph"] in ("s", "t", "f") for e in ev if e not in coll)
       and all(e["ph"] == "X" for e in ev if "bind_id" in e), "the collectives' flows alone are ph s/f")
tracer = [v for v in names.values() if v.startswith("ingero-") or v.startswith("nng:")]
ok(not tracer, "the tracer's own threads are left out", tracer[:3])
od = d.get("otherData", {})
if ex.get("ranks"):   # a job: explain's figures are its straggler's own analysis, the export's the whole trace's
    ok(od.get("headline", "").startswith("GPU idle"), "otherData carries the trace's headline", od.get("headline"))
else:
    ok(od.get("headline") == ex["figures"]["headline"], "otherData carries explain's headline", od.get("headline"))
if ex["gpu_idle_pct"]["measured"]:
    st = [k for k, v in names.items() if v.startswith("GPU stream")]
    sl = [e for k in st for e in tracks.get(k, [])]
    ok(st and sl and all(e["name"] for e in sl), "stream tracks with the work timed alone, named", (len(st), len(sl)))
EOF
}

for n in c01_cnn_workers2 c11_streams_events c22_prefetch_pinned_streams c48_ddp_gloo_4ranks_transform \
	c50_nccl_world1; do
	x=tests/corpus/$n.db.xz
	[ -f "$x" ] || { skip "$n: not in the corpus"; continue; }
	db=$(corpus_db "$x" "$T/$n.db") || { nok "$n: unpack"; continue; }
	check_export "$n" "$db"
	case $n in
	c48_*) python3 tests/helpers/perfetto_collectives.py "$n" "$T/$n.json" "$T/$n.explain.json" 3 ;;
	c50_*) python3 tests/helpers/perfetto_collectives.py "$n" "$T/$n.json" "$T/$n.explain.json" -1 "$db" ;;
	esac
done
# without GPU marks: the generated blocked scenario (tests/helpers/gen_reportdb.c)
if "$B/tests/gen_reportdb" blocked "$T/blocked.db" >/dev/null 2>&1; then
	check_export blocked "$T/blocked.db"
else
	nok "generate the blocked scenario"
fi
finish
