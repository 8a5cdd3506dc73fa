# saw.py TRACE.db [BUCKET_NS] — the lower envelope of done_ns - recorded_ns of the calling threads' GPU
# marks per bucket over the run, the clamped ones (flags & 2) counted apart: the GPU clock's drift
# against the host's shows as a slope within each anchor's period (docs/gpu-runs.md section 55)
import sqlite3, sys, collections
db = sys.argv[1]; B = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000_000
con = sqlite3.connect(db)
rows = con.execute("select recorded_ns, done_ns, flags from gpu_marks where flags & 1 = 0 order by recorded_ns").fetchall()
t0 = rows[0][0]
b = collections.defaultdict(list)
for r, g, f in rows:
    b[(r - t0) // B].append((g - r, f))
for k in sorted(b):
    v = b[k]; d = sorted(x for x, f in v if not f & 2); c = sum(1 for x, f in v if f & 2)
    print(f"{k*B/1e6:7.0f}ms n={len(v):5d} clamped={c:5d} min={d[0]/1e3 if d else float('nan'):8.2f}us p10={d[len(d)//10]/1e3 if d else float('nan'):8.2f}")
