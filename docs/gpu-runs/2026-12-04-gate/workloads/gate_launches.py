"""Host-bound launches, for the CI gate's A/A on the H200 (calls.sh): a small
MLP trained with Adam on a fixed batch, thousands of small kernels a second,
no sync inside the loop (examples/train_overhead.py's loop, fixed length).
The issue's launch-heavy A/A failure was this kind of loop: its calls per
second over the whole window moved with the length of the imports.

    python3 gate_launches.py [--steps 2500]
"""
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=2500)
a = ap.parse_args()
dev = torch.device("cuda")
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                        torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(dev)
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
x = torch.randn(512, 32, device=dev)
y = torch.randn(512, 1, device=dev)
for _ in range(20):  # warm-up: cuBLAS handles, the allocator
    opt.zero_grad()
    torch.nn.functional.mse_loss(m(x), y).backward()
    opt.step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(a.steps):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(m(x), y)  # STEP
    loss.backward()
    opt.step()
torch.cuda.synchronize()
wall = time.perf_counter() - t0
print(f"gate_launches steps={a.steps} wall_s={wall:.3f} steps_per_s={a.steps / wall:.1f} loss={loss.item():.5f}")
