"""A small PyTorch program that exercises every CUDA path the preload library
must see: runtime launches (__cudaLaunchKernel), cuBLAS launches through
driver pointers (cuLaunchKernel/cuLaunchKernelEx), copies both ways, a sync
per step (.item()), and a DataLoader with forked workers.

  python3 examples/small_check.py [--steps 50] [--workers 4]
Prints its own counts (steps, batches, worker pids) as key=value.
"""
import argparse
import os

import torch
from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, n, f):
        self.x = torch.randn(n, f)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--workers", type=int, default=4)
    a = ap.parse_args()
    dev = torch.device("cuda")
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)).to(dev)
    x = torch.randn(256, 64)
    s = 0.0
    for _ in range(a.steps):
        s += m(x.to(dev)).relu().sum().item()
    loader = DataLoader(Rows(4096, 64), batch_size=256, num_workers=a.workers)
    batches = 0
    for b in loader:
        s += m(b.to(dev)).sum().item()
        batches += 1
    print(f"steps={a.steps} batches={batches} workers={a.workers} pid={os.getpid()} sum={s:.3f}")


if __name__ == "__main__":
    main()
