#!/bin/sh
# analyzer_stacks.sh — `ingero-analyze stacks` on real traces (issue 39):
#   * folded lines: "process pid;thread tid;frames... VALUE", one a (thread,
#     stack), whose on-CPU values add up to the samples with a stack in the
#     window (SQL over cpu_samples), the user's script among the frames,
#     and a window (--from/--to) holding only its own samples;
#   * --offcpu: values add up to the blocked time the sampled blocks stand
#     for (sum of blocked ns / chance, docs/schema.md), in microseconds;
#   * speedscope: one sampled profile per thread, frame indexes in range,
#     weights summing to endValue, in nanoseconds (samples x 1e9 / sample_hz).
# tests/run: pool (no clock it asserts on: run beside another test)
. "$(dirname "$0")/../lib.sh"
A=$B/ingero-analyze
command -v python3 >/dev/null || { skip "stacks: python3 missing"; finish; }
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

n=c37_loader_cold_reads
x=tests/corpus/$n.db.xz
[ -f "$x" ] || { skip "$n: not in the corpus"; finish; }
DB=$T/$n.db
sh tests/corpus/unpack.sh "$x" "$DB" || { nok "unpack $n"; finish; }
"$A" stacks "$DB" >"$T/on.folded" && "$A" stacks --from 8s --to 9s "$DB" >"$T/win.folded" &&
	"$A" stacks --offcpu "$DB" >"$T/off.folded" && "$A" stacks --format speedscope -o "$T/on.json" "$DB"
check_eq "stacks runs (folded, a window, --offcpu, speedscope)" 0 $?
"$A" stacks --format svg "$DB" >/dev/null 2>&1
check_eq "stacks: an unknown format is a usage error" 2 $?
python3 - "$DB" "$T" <<'EOF'
import json, re, sqlite3, sys
db, T = sys.argv[1:3]
def ok(cond, what, extra=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond or not extra else f" ({extra})"), flush=True)
c = sqlite3.connect(db)
s = dict(c.execute("SELECT key, value FROM session"))
t0, hz = int(s["start_mono_ns"]), float(s["sample_hz"])
line = re.compile(r"^[^;]+ \d+;[^;]* \d+(;[^;]+)+ \d+$")
def folded(name):
    rows = open(f"{T}/{name}").read().splitlines()
    return rows, [r for r in rows if not line.match(r)]
on, bad = folded("on.folded")
ok(on and not bad, "folded lines: process;thread;frames VALUE", bad[:1])
want = c.execute("SELECT count(*) FROM cpu_samples WHERE stack_id IS NOT NULL").fetchone()[0]
got = sum(int(r.rsplit(" ", 1)[1]) for r in on)
ok(0.98 * want <= got <= want, "on-CPU values add up to the samples with a stack", (got, want))
ok(any("c37_loader_cold_reads.py:" in r for r in on), "the user's script is among the frames")
ok(len({(r.split(";")[1]) for r in on}) > 1, "per thread: several threads")
win, bad = folded("win.folded")
want_w = c.execute("SELECT count(*) FROM cpu_samples WHERE stack_id IS NOT NULL AND ts_ns >= ? AND ts_ns < ?",
                   (t0 + 8 * 10**9, t0 + 9 * 10**9)).fetchone()[0]
got_w = sum(int(r.rsplit(" ", 1)[1]) for r in win)
ok(0 < got_w < got and 0.98 * want_w <= got_w <= want_w, "a window holds its own samples", (got_w, want_w))
off, bad = folded("off.folded")
ok(off and not bad, "--offcpu: folded lines", bad[:1])
est = c.execute("SELECT sum((o.runnable_ns - o.start_ns) / s.chance) FROM off_cpu_stacks s JOIN off_cpu o "
                "ON o.tid = s.tid AND o.start_ns = s.start_ns WHERE s.stack_id IS NOT NULL").fetchone()[0] / 1e3
got_off = sum(int(r.rsplit(" ", 1)[1]) for r in off)
ok(abs(got_off - est) <= 0.01 * est + len(off), "--offcpu values add up to the estimated blocked microseconds",
   (got_off, round(est)))
d = json.load(open(f"{T}/on.json"))
fr, pr = d["shared"]["frames"], d["profiles"]
tids = {r.split(";")[1].rsplit(" ", 1)[1] for r in on}
ok(len(pr) == len(tids), "speedscope: one profile per thread", (len(pr), len(tids)))
ok(all(p["type"] == "sampled" and len(p["samples"]) == len(p["weights"]) and
       all(0 <= i < len(fr) for smp in p["samples"] for i in smp) for p in pr), "speedscope: samples index the frames")
ok(all(abs(sum(p["weights"]) - p["endValue"]) <= 1 for p in pr), "speedscope: weights sum to endValue")
total = sum(sum(p["weights"]) for p in pr)
ok(all(p["unit"] == "nanoseconds" for p in pr) and abs(total - got * 1e9 / hz) <= len(on) + 1, "speedscope: nanoseconds of CPU",
   (total, got * 1e9 / hz))
EOF
finish
