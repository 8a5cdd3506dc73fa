# truth.py WORKLOAD.py [OUT.json] — the GPU's own account of a workload's kernels, for the analyzer's
# estimate of GPU time to be checked against: the workload runs under torch.profiler (CUPTI,
# CUDA activity only), then per kernel and copy kind: launches, total and median device time;
# the whole run's device time; and each kernel's durations' quartiles for the most launched ten.
import json, re, runpy, statistics, sys, time
import torch
from torch.profiler import profile, ProfilerActivity
from torch.autograd import DeviceType

path = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else None
t = time.time()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    runpy.run_path(path, run_name="__main__")
wall = time.time() - t
by = {}
spans = []
for e in prof.events():
    if e.device_type != DeviceType.CUDA:
        continue
    by.setdefault(e.name, []).append(e.time_range.end - e.time_range.start)   # us
    spans.append((e.time_range.start, e.time_range.end))
# the GPU's busy share (its work's spans merged) over the middle half of its timeline: the steady
# state's idle, set against explain's
spans.sort()
lo, hi = (spans[0][0], max(b for a, b in spans)) if spans else (0, 0)
m0, m1 = lo + (hi - lo) / 4, lo + 3 * (hi - lo) / 4
busy, end = 0.0, m0
for a, b in spans:
    a, b = max(a, end), min(b, m1)
    if b > a:
        busy += b - a
        end = b
busy_mid = busy / (m1 - m0) if m1 > m0 else 0.0
total = sum(sum(v) for v in by.values())
n = sum(len(v) for v in by.values())
print(f"truth {path} wall_s={wall:.2f} device_events={n} device_ms={total / 1000:.1f} busy_mid={busy_mid:.3f}")
for name, v in sorted(by.items(), key=lambda kv: -len(kv[1]))[:10]:
    v.sort()
    q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
    print(f"  n={len(v)} sum_ms={sum(v) / 1000:.1f} p25={q(0.25):.2f} p50={q(0.5):.2f} p75={q(0.75):.2f} us "
          f"{re.sub(r'<.*', '<...>', name)[:90]}")
if out:   # every kernel and copy kind: launches, total, quartiles (us), for the analyzer's pieces to be set against
    rows = []
    for name, v in by.items():
        v.sort()
        rows.append({"name": name, "n": len(v), "sum_us": sum(v), "p25": v[len(v) // 4], "p50": v[len(v) // 2],
                     "p75": v[3 * len(v) // 4]})
    json.dump({"workload": path, "wall_s": wall, "device_us": total, "busy_mid": busy_mid, "kernels": rows}, open(out, "w"))
