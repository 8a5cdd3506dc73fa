"""The design's case (pytorch/pytorch#154318): an in-memory inference loop that
starves the GPU when fed through DataLoader.

  python3 examples/dataloader_starve.py --mode direct
  python3 examples/dataloader_starve.py --mode loader --workers 4 [--pin] [--persistent]

7M samples x 100 features, a 3-layer MLP, batch 1,048,576 by default.  Prints
one line of key=value figures (wall time, time inside next(loader), copies,
model) measured from Python, so a traced run can be compared with its own
view of itself.
"""
import argparse
import os
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["direct", "loader"], default="loader")
    ap.add_argument("--rows", type=int, default=7_000_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--batch", type=int, default=1_048_576)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--pin", action="store_true")
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--epochs", type=int, default=1)
    a = ap.parse_args()

    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.randn(a.rows, a.features)
    if a.mode == "direct":
        # The healthy baseline the issue compares against: shuffle once, up front
        # (before any GPU work), then every batch is a contiguous slice - a view,
        # no per-step gather or collation.
        x = x[torch.randperm(a.rows)]
    model = torch.nn.Sequential(
        torch.nn.Linear(a.features, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 1)).to(dev).eval()
    torch.cuda.synchronize()

    t_next = t_copy = t_model = 0.0
    batches = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        # One DataLoader for all epochs: persistent_workers keeps its workers alive
        # between epochs only if the loader itself is reused.
        loader = None if a.mode == "direct" else DataLoader(
            TensorDataset(x), batch_size=a.batch, shuffle=True, num_workers=a.workers,
            pin_memory=a.pin, persistent_workers=a.persistent and a.workers > 0)
        for _ in range(a.epochs):
            if a.mode == "direct":
                it = (x[i:i + a.batch] for i in range(0, a.rows, a.batch))
            else:
                it = (b[0] for b in loader)
            while True:
                s = time.perf_counter()
                try:
                    b = next(it)
                except StopIteration:
                    break
                t_next += time.perf_counter() - s
                s = time.perf_counter()
                b = b.to(dev, non_blocking=a.pin)
                t_copy += time.perf_counter() - s
                s = time.perf_counter()
                out = model(b)
                total = out.sum().item()  # the per-step sync a real loop often has
                t_model += time.perf_counter() - s
                batches += 1
    wall = time.perf_counter() - t0
    print(f"mode={a.mode} workers={a.workers} pin={int(a.pin)} persistent={int(a.persistent)} "
          f"batches={batches} wall_s={wall:.3f} next_s={t_next:.3f} copy_s={t_copy:.3f} "
          f"model_s={t_model:.3f} cpu_s={time.process_time():.3f} last={total:.3f} pid={os.getpid()}")


if __name__ == "__main__":
    main()
