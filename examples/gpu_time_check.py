"""gpu_time_check.py — a ground truth for the measured GPU time (docs/gpu-runs.md).

Each step queues matrix products worth about --gpu-ms of GPU time, then the
host does --host-ms of work of its own WITHOUT waiting for the GPU (no sync in
the loop), so the GPU drains and idles until the next step.  torch's own CUDA
events around each step's work give the true GPU busy time; the script prints
the true idle share of the loop's window, for ingero's measured figure to be
compared with.  A CUDA graph is captured and replayed at the end, and its
result checked against eager mode: marks must never enter a capture.

With --kernel-us K the loop is launch-bound instead: each step launches
--launches kernels of K microseconds (torch.cuda._sleep, its cycles
calibrated against CUDA events), one at a time, the host working
--spacing-us after each (longer than K: every kernel runs alone, the GPU
keeps up), then --host-ms more.  The truth is the kernels' calibrated time:
where the marks resolve only some kernels, this checks the estimate from the
kernels timed alone (docs/chains.md).
"""
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--gpu-ms", type=float, default=4.0)
ap.add_argument("--host-ms", type=float, default=6.0)
ap.add_argument("--kernel-us", type=float, default=0)
ap.add_argument("--launches", type=int, default=40)
ap.add_argument("--spacing-us", type=float, default=100.0)
args = ap.parse_args()


def spin(seconds):
    deadline = time.monotonic() + seconds
    x = 0
    while time.monotonic() < deadline:   # host work, on-CPU, while the GPU drains
        x += 1


def launch_bound():
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = 100000
    torch.cuda._sleep(cycles)   # warm-up
    torch.cuda.synchronize()
    s.record()
    for _ in range(50):
        torch.cuda._sleep(cycles)
    e.record()
    torch.cuda.synchronize()
    cycles = max(1000, int(cycles * args.kernel_us / (s.elapsed_time(e) * 1000 / 50)))
    s.record()
    for _ in range(200):
        torch.cuda._sleep(cycles)
    e.record()
    torch.cuda.synchronize()
    per_s = s.elapsed_time(e) / 1000 / 200
    t0_ns = time.monotonic_ns()
    for _ in range(args.steps):
        for _ in range(args.launches):
            torch.cuda._sleep(cycles)
            spin(args.spacing_us / 1e6)
        spin(args.host_ms / 1000)
    torch.cuda.synchronize()
    t1_ns = time.monotonic_ns()
    wall = (t1_ns - t0_ns) / 1e9
    busy = per_s * args.steps * args.launches
    idle = 100 * (1 - busy / wall)
    print(f"truth steps={args.steps} launches={args.launches} kernel_us={per_s * 1e6:.1f} gpu_busy_s={busy:.4f} "
          f"wall_s={wall:.4f} idle_pct={idle:.1f}-{idle:.1f} t0_ns={t0_ns} t1_ns={t1_ns}")


if args.kernel_us:
    launch_bound()
    raise SystemExit(0)

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

# Truth: each step's end event, timed against one start event recorded on an
# idle GPU at t0, gives when the step's work finished (host clock); the work
# began once the host had queued it, between the host times just before and
# just after `a @ b` (the GPU is idle then: host_ms is longer than the work).
# So the true busy time lies between sum(end - after) and sum(end - before);
# a start event per step would also count the host's dispatch as GPU time.
start = torch.cuda.Event(enable_timing=True)
ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
before, after = [], []
torch.cuda.synchronize()
start.record()
torch.cuda.synchronize()
t0_ns = time.monotonic_ns()   # CLOCK_MONOTONIC, the trace's clock
for i in range(args.steps):
    before.append(time.monotonic_ns())
    for _ in range(reps):
        c = a @ b
    after.append(time.monotonic_ns())
    ends[i].record()
    deadline = time.monotonic() + args.host_ms / 1000
    x = 0
    while time.monotonic() < deadline:   # host work, on-CPU, while the GPU drains
        x += 1
torch.cuda.synchronize()
t1_ns = time.monotonic_ns()
wall = (t1_ns - t0_ns) / 1e9
done = [t0_ns + start.elapsed_time(e) * 1e6 for e in ends]
busy_lo = sum(max(0.0, d - max(a_, d_prev)) for d, a_, d_prev in zip(done, after, [0] + done[:-1])) / 1e9
busy_hi = sum(max(0.0, d - max(b_, d_prev)) for d, b_, d_prev in zip(done, before, [0] + done[:-1])) / 1e9
print(f"truth steps={args.steps} reps={reps} gpu_busy_s={busy_lo:.4f}-{busy_hi:.4f} wall_s={wall:.4f} "
      f"idle_pct={100 * (1 - busy_hi / wall):.1f}-{100 * (1 - busy_lo / wall):.1f} t0_ns={t0_ns} t1_ns={t1_ns}")

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
