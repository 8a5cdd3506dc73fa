"""A launch-heavy training loop for measuring the tracer's overhead: a small
MLP trained with Adam for many steps (thousands of small kernels per second).

  python3 examples/train_overhead.py [--steps 3000]
Prints steps_per_s, wall_s and thread_cpu_s: the main thread's CPU time over
the loop, where a tracer's per-call and per-switch costs land, and which
varies less than wall time on a shared machine.
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                            torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x = torch.randn(512, 32, device=dev)
    y = torch.randn(512, 1, device=dev)
    for _ in range(50):  # warm-up: cuBLAS handles, allocator
        opt.zero_grad(); torch.nn.functional.mse_loss(m(x), y).backward(); opt.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    c0 = time.thread_time()
    for _ in range(a.steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(m(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    cpu = time.thread_time() - c0
    print(f"steps={a.steps} wall_s={wall:.4f} thread_cpu_s={cpu:.4f} steps_per_s={a.steps / wall:.1f} "
          f"loss={loss.item():.5f}")


if __name__ == "__main__":
    main()
