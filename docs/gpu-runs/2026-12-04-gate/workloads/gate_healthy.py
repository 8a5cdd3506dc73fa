"""A short healthy loop, for the CI gate on the H200 (calls.sh): each step
the host prepares the next input (~3 ms of CPU: tokenising, augmenting,
bookkeeping) while the GPU runs the step before (6-8 ms: a small MLP trained
with AdamW plus a fixed stretch of GPU work, torch.cuda._sleep, the rest of
a larger model), so the host's work is hidden and the GPU stays busy.

    python3 gate_healthy.py            the baseline (A/A)
    python3 gate_healthy.py --item     a per-step loss.item(): the host waits for every step,
                                       then prepares the next while the GPU idles (-30 to -40 %)
"""
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=400)
ap.add_argument("--item", action="store_true")
ap.add_argument("--host-ms", type=float, default=3.0)
ap.add_argument("--gpu-ms", type=float, default=8.0)
a = ap.parse_args()
dev = torch.device("cuda")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                            torch.nn.ReLU(), torch.nn.Linear(1024, 1)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
src = torch.randn(256, 1024).pin_memory()
scratch = torch.ones(4096)


def prepare(ms):
    """The step's host-side work: CPU time the GPU need not wait for."""
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:  # HOST_WORK
        scratch.mul_(1.0001)


def gpu_work(ms):
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep:
        sleep(int(ms * 1.5e6))  # cycles: ms at 1.5 GHz, 0.75 ms at the H200's 1.98 GHz boost
    else:
        for _ in range(int(ms)):
            model(x)


x = src.to(dev, non_blocking=True)
for _ in range(20):  # warm-up
    model(x).square().mean().backward()
torch.cuda.synchronize()
losses = []
t0 = time.perf_counter()
for step in range(a.steps):
    prepare(a.host_ms)
    x = src.to(dev, non_blocking=True)
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    gpu_work(a.gpu_ms)
    if a.item:
        losses.append(loss.item())  # ITEM
torch.cuda.synchronize()
wall = time.perf_counter() - t0
print(f"gate_healthy item={int(a.item)} steps={a.steps} wall_s={wall:.3f} ms_per_step={1000 * wall / a.steps:.2f}")
