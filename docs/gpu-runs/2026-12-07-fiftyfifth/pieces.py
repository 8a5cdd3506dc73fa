# pieces.py TRACE.db — per kernel (demangled), the GPU time of pieces launched into an empty stream as
# the analyzer times them (from the launch call's end to the calling thread's mark right behind it;
# clamped and watcher marks left out): docs/gpu-runs.md section 55, set against CUPTI's (truth.py)
import bisect, sqlite3, subprocess, sys, statistics, collections
db = sys.argv[1]
con = sqlite3.connect(db); con.enable_load_extension(True); con.load_extension('/work/main/build/libingero_sqlite.so')
k = con.execute("select addr, name from kernels").fetchall()
dem = subprocess.run(["c++filt"], input="\n".join(n or "?" for a, n in k), capture_output=True, text=True).stdout.split("\n")
name = {a: dem[i] for i, (a, n) in enumerate(k)}
calls = collections.defaultdict(list)
for st, s, d, kern in con.execute("select stream, start_ns, dur_ns, kernel from cuda_calls where kernel is not null order by start_ns"):
    calls[st].append((s, s + d, kern))
marks = collections.defaultdict(list)
for st, r, g, f in con.execute("select stream, recorded_ns, done_ns, flags from gpu_marks order by recorded_ns"):
    marks[st].append((r, g, f))
samp = collections.defaultdict(list)
for st, ms in marks.items():
    cs = calls.get(st, []); starts = [c[0] for c in cs]
    for j, (r, g, f) in enumerate(ms):
        if f & 3: continue
        i = bisect.bisect_right(starts, r) - 1
        if i < 0: continue
        a, b, kern = cs[i]
        if r - b > 2000 or r < b: continue
        if j and ms[j - 1][1] > a: continue
        samp[name.get(kern, "?")].append(g - b)
rows = sorted(((len(v), statistics.median(v), n) for n, v in samp.items()), reverse=True)
for n, med, nm in rows[:14]:
    print(f"n={n:5d} p50={med/1000:6.2f}us {nm.split('(')[0][-70:]}")
