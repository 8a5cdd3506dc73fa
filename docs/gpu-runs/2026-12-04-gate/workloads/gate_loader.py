"""A DataLoader job, for the CI gate on the H200 (calls.sh): four workers
build batches of images with per-item CPU work (an augmentation), pinned,
prefetched; the model's step is a small MLP plus a fixed stretch of GPU work
(torch.cuda._sleep: the rest of a larger model, so that the step's GPU time
is known, 7.5-10 ms, whatever the matmuls' speed).  Four workers keep ahead of
the GPU with room to spare; the regressions do not:

    python3 gate_loader.py                 the baseline (A/A)
    python3 gate_loader.py --workers 0     num_workers 4 -> 0: the main process builds every batch
    python3 gate_loader.py --no-pin        pin_memory removed: copies from pageable memory
    python3 gate_loader.py --heavy         a CPU-heavy transform: 6x the per-item augmentation

A batch: 64 items of 3x128x128 floats (12.6 MB), ~0.25 ms of CPU each
(~19 ms a batch with its collation, ~5 ms a batch for four workers, against
7.5-10 ms of GPU work a step); --heavy: ~1 ms each (~17 ms a batch for four).
Expected: --workers 0 and --heavy about half the steps per second; --no-pin
the same steps, each 12.6 MB copy blocking the host ~1.6 ms (pageable).
"""
import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset

ap = argparse.ArgumentParser()
ap.add_argument("--workers", type=int, default=4)
ap.add_argument("--no-pin", action="store_true")
ap.add_argument("--heavy", action="store_true")
ap.add_argument("--batches", type=int, default=200)
ap.add_argument("--gpu-ms", type=float, default=10.0)
a = ap.parse_args()
ITEM_S = 0.00015 * (6 if a.heavy else 1)
BATCH = 64


class Images(Dataset):
    def __len__(self):
        return BATCH * a.batches

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 128, 128, generator=g)
        end = time.perf_counter() + ITEM_S
        while time.perf_counter() < end:  # TRANSFORM (per-item CPU work: an augmentation)
            x.mul_(0.999).add_(0.001)
        return x, i % 10


def gpu_work(ms):
    """The rest of the model: a known stretch of GPU time."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep:
        sleep(int(ms * 1.5e6))  # cycles: ms at 1.5 GHz, 0.75 ms at the H200's 1.98 GHz boost
    else:
        for _ in range(int(ms)):
            big @ big


dev = torch.device("cuda")
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 128 * 128, 256), torch.nn.ReLU(),
                          torch.nn.Linear(256, 10)).to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
big = torch.randn(2048, 2048, device=dev)
dl = DataLoader(Images(), batch_size=BATCH, num_workers=a.workers, pin_memory=not a.no_pin,
                persistent_workers=a.workers > 0, prefetch_factor=4 if a.workers else None)
t0 = None
n = 0
for x, y in dl:
    if t0 is None:
        t0 = time.perf_counter()  # from the first batch: the workers' start is start-up
    x = x.to(dev, non_blocking=True)  # COPY
    y = y.to(dev, non_blocking=True)
    loss = torch.nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    gpu_work(a.gpu_ms)
    n += 1
torch.cuda.synchronize()
wall = time.perf_counter() - t0
print(f"gate_loader workers={a.workers} pin={int(not a.no_pin)} heavy={int(a.heavy)} batches={n} "
      f"wall_s={wall:.3f} ms_per_batch={1000 * wall / max(n - 1, 1):.2f}")
