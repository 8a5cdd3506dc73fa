"""gpu_time_check.py — a ground truth for the measured GPU time (docs/gpu-runs.md).

Each step queues matrix products worth about --gpu-ms of GPU time, then the
host does --host-ms of work of its own WITHOUT waiting for the GPU (no sync in
the loop), so the GPU drains and idles until the next step.  torch's own CUDA
events around each step's work give the true GPU busy time; the script prints
the true idle share of the loop's window, for ingero's measured figure to be
compared with.  A CUDA graph is captured and replayed at the end, and its
result checked against eager mode: marks must never enter a capture.
"""
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--gpu-ms", type=float, default=4.0)
ap.add_argument("--host-ms", type=float, default=6.0)
args = ap.parse_args()

dev = "cuda"
a = torch.randn(4096, 4096, device=dev)
b = torch.randn(4096, 4096, device=dev)
torch.cuda.synchronize()
# calibrate: how many products make gpu_ms
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(10):
    c = a @ b
e.record()
torch.cuda.synchronize()
per = s.elapsed_time(e) / 10
reps = max(1, round(args.gpu_ms / per))

starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
torch.cuda.synchronize()
t0_ns = time.monotonic_ns()   # CLOCK_MONOTONIC, the trace's clock
t0 = time.monotonic()
for i in range(args.steps):
    starts[i].record()
    for _ in range(reps):
        c = a @ b
    ends[i].record()
    deadline = time.monotonic() + args.host_ms / 1000
    x = 0
    while time.monotonic() < deadline:   # host work, on-CPU, while the GPU drains
        x += 1
torch.cuda.synchronize()
t1_ns = time.monotonic_ns()
wall = time.monotonic() - t0
busy = sum(starts[i].elapsed_time(ends[i]) for i in range(args.steps)) / 1000
# the loop's window as ingero sees it runs from the first queued work to the
# last call; the true idle share over the loop:
print(f"truth steps={args.steps} reps={reps} gpu_busy_s={busy:.4f} wall_s={wall:.4f} "
      f"idle_pct={100 * (1 - busy / wall):.1f} t0_ns={t0_ns} t1_ns={t1_ns}")

# a captured graph must replay exactly what eager mode computes
x = torch.randn(256, 1024, device=dev)
w = torch.randn(1024, 1024, device=dev)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        y = torch.relu(x @ w)
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = torch.relu(x @ w)
for _ in range(20):
    g.replay()
torch.cuda.synchronize()
ref = torch.relu(x @ w)
print(f"graph ok={bool(torch.allclose(y, ref))}")
