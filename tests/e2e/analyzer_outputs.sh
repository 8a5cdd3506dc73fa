#!/bin/sh
# analyzer_outputs.sh — the analyzer's file outputs, checked by format:
#   * export --format perfetto: valid Chrome trace-event JSON (our own
#     validator: required fields per phase, X slices with dur and properly
#     nested per track, balanced B/E, flow s/f pairs by id bound inside a
#     slice, numeric counters, a named track per traced thread)
#   * report --html: self-contained (no script, no external reference),
#     opened in headless Chromium and screenshotted (build/tests/analyzer_report.png)
#   * timeline and per-process: window, filters, JSON
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
GEN=$B/tests/gen_reportdb
A=$B/ingero-analyze
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

"$GEN" contention "$T/c.db" >/dev/null 2>&1 || nok "generate contention"
"$GEN" assembly "$T/a.db" --steps 30 >/dev/null 2>&1 || nok "generate assembly"

# ---- Perfetto / Chrome trace-event JSON ----
validate() { # json db
	"${PY_SQLITE:-python3}" - "$1" "$2" <<'PY'
import json, os, sqlite3, sys
from collections import defaultdict
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
assert isinstance(ev, list) and ev, "no events"
known = set("XBEiIsftCMbenPO")
tracks = defaultdict(list)
be = defaultdict(list)
flows = defaultdict(dict)
bound = defaultdict(dict)   # flow events v2: bind_id with flow_out/flow_in on the slices themselves
named = set()
def ns(x):
    return round(float(x) * 1000)
for e in ev:
    ph = e.get("ph")
    assert ph in known, ("phase", e)
    assert isinstance(e.get("name"), str), ("name", e)
    assert isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), ("pid/tid", e)
    if ph == "M":
        assert isinstance(e.get("args"), dict), ("metadata args", e)
        if e["name"] == "thread_name":
            named.add((e["pid"], e["tid"]))
        continue
    assert isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, ("ts", e)
    key = (e["pid"], e["tid"])
    if ph == "X":
        assert isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, ("dur", e)
        tracks[key].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
        for end in ("flow_out", "flow_in"):
            if e.get(end):
                assert "bind_id" in e and end not in bound[e["bind_id"]], ("bound flow", e)
                bound[e["bind_id"]][end] = (key, ns(e["ts"]))
    elif ph == "B":
        be[key].append(e["name"])
    elif ph == "E":
        assert be[key], ("E without B", e)
        be[key].pop()
    elif ph in "sf":
        assert "id" in e, ("flow id", e)
        assert ph not in flows[e["id"]], ("flow id reused", e)
        flows[e["id"]][ph] = (key, ns(e["ts"]))
    elif ph == "C":
        assert e.get("args") and all(isinstance(v, (int, float)) for v in e["args"].values()), ("counter", e)
assert all(not s for s in be.values()), "unbalanced B/E"
for key, sl in tracks.items():
    sl.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for a, b, n in sl:
        while stack and a >= stack[-1][1]:
            stack.pop()
        assert not stack or b <= stack[-1][1], ("slices overlap without nesting on", key, (a, b, n), stack[-1])
        stack.append((a, b))
    assert key in named, ("track without a thread name", key)
def inside(key, t):
    return any(a <= t <= b for a, b, _ in tracks.get(key, []))
for i, f in flows.items():
    assert set(f) == {"s", "f"}, ("flow without both ends", i, f)
    assert f["s"][1] <= f["f"][1], ("flow goes back in time", i)
    for ph in "sf":
        assert inside(*f[ph]), ("flow end outside any slice", i, ph)
db = sqlite3.connect(sys.argv[2])
db.enable_load_extension(True)   # cuda_calls: the call blocks as rows
db.load_extension(os.environ["INGERO_SQLITE_EXT"])
n_calls = db.execute("select count(*) from cuda_calls").fetchone()[0]
n_off = db.execute("select count(*) from off_cpu").fetchone()[0]
cuda = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda")
sched = sum(1 for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("off-CPU"))
assert cuda == n_calls, ("cuda slices", cuda, n_calls)
assert sched == n_off, ("off-CPU slices", sched, n_off)
tids = {r[0] for r in db.execute("select tid from cuda_calls union select tid from off_cpu")}
assert tids <= {t for _, t in named}, ("threads without a track", tids - {t for _, t in named})
for i, f in bound.items():
    assert set(f) == {"flow_out", "flow_in"}, ("bound flow without both ends", i, f)
    assert f["flow_out"][1] <= f["flow_in"][1], ("bound flow goes back in time", i)
assert flows or bound, "no launch -> sync flow"
assert any(e.get("ph") == "C" for e in ev), "no counters"
print("ok", len(ev), "events")
PY
}
for s in c a; do
	"$A" export --format perfetto -o "$T/$s.json" "$T/$s.db"
	check_eq "export $s exits 0" 0 $?
	validate "$T/$s.json" "$T/$s.db" >"$T/v.out" 2>&1
	check "perfetto JSON of $s is valid trace-event format" test $? -eq 0
	grep -v '^ok' "$T/v.out" | tail -n 5 | sed 's/^/# /'
done
"$A" export --format perfetto -o - --from 1 --to 1.5 "$T/c.db" | python3 -c 'import json,sys; json.load(sys.stdin)'
check "export of a window to stdout parses" test $? -eq 0

# ---- HTML report ----
"$A" report --html -o "$T/r.html" "$T/c.db"
check_eq "report --html exits 0" 0 $?
check "report has SVG charts" grep -q '<svg' "$T/r.html"
check "report has the chains" grep -q 'class=.sev HIGH' "$T/r.html"
check "report has the timeline rows" grep -q 'no CUDA work queued' "$T/r.html"
check_eq "report is self-contained (no script, src=, href=, url(, @import)" 0 \
	"$(grep -Eci '<script|src=|href=|url\(|@import' "$T/r.html")"
python3 -c 'import html.parser,sys; p=html.parser.HTMLParser(); p.feed(open(sys.argv[1]).read()); p.close()' "$T/r.html"
check "report parses as HTML" test $? -eq 0

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] && is_root; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; }
	CHROMIUM=$(command -v chromium || true)
fi
if [ -z "$CHROMIUM" ]; then
	skip "headless Chromium not available (install Debian's chromium as root)"
else
	shot=$B/tests/analyzer_report.png
	mkdir -p "$(dirname "$shot")"
	rm -f "$shot"
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T/chromium" --window-size=1200,2400 --screenshot="$shot" "file://$T/r.html" \
		>"$T/chromium.log" 2>&1
	check "Chromium rendered the report to a PNG" test -s "$shot"
	check_eq "the screenshot is a PNG" "PNG" "$(head -c 4 "$shot" 2>/dev/null | tail -c 3)"
	# a blank page compresses to a few KB; a rendered report is far larger
	check_ge "the screenshot has content (bytes)" "$(stat -c %s "$shot" 2>/dev/null || echo 0)" 40000
fi

# ---- timeline, per-process ----
n=$("$A" timeline --from 1 --to 1.1 "$T/c.db" | grep -c '^+1\.0')
check_ge "timeline --from 1 --to 1.1 shows events of that window" "$n" 10
check_eq "timeline shows none outside it" 0 "$("$A" timeline --from 1 --to 1.1 "$T/c.db" | grep -vc '^+1\.0')"
check_eq "timeline -p keeps one worker" 1 \
	"$("$A" timeline --limit 0 -p 4301 "$T/c.db" | awk '{print $2}' | cut -d/ -f1 | sort -u | wc -l | tr -d ' ')"
"$A" timeline --json --limit 5 "$T/c.db" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["events"]) == 5 and d["more"] == 1'
check "timeline --json with --limit" test $? -eq 0
"$A" per-process --json "$T/c.db" | python3 -c '
import json, sys
d = json.load(sys.stdin)
roles = sorted(p["role"] for p in d["processes"])
assert roles == ["main"] + ["worker"] * 4, roles
assert d["main_pid"] == 4242
assert abs(sum(p["main_wait_share"] for p in d["processes"] if p["role"] == "worker") - 1) < 0.01'
check "per-process --json: roles and shares of main's waiting" test $? -eq 0
finish
