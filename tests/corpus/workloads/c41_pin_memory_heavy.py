# Class: a DataLoader with pin_memory=True and large batches (128 MiB of float32 each): four workers
# make the batches cheaply (a slice of an in-memory tensor, line 10), and the DataLoader's one
# pin-memory thread in the main process copies every batch into page-locked memory before the loop
# (line 17) gets it. That thread's copies are the bottleneck: the loop waits on its queue.
import time, torch
from torch.utils.data import DataLoader, Dataset
class DS(Dataset):
    def __init__(self): self.x = torch.randn(64, 2048, 1024)
    def __len__(self): return 300
    def __getitem__(self, i): return self.x[i % 64]   # ITEM
if __name__ == "__main__":
    dl = DataLoader(DS(), batch_size=16, num_workers=4, pin_memory=True, persistent_workers=True, prefetch_factor=4)
    w = torch.randn(1024, 1024, device="cuda")
    t = time.time(); steps = 0
    for epoch in range(2):
        for b in dl:
            y = (b.cuda(non_blocking=True) @ w).relu().sum()   # STEP
            steps += 1
    torch.cuda.synchronize(); print(f"c41 wall_s={time.time()-t:.3f} steps={steps}")
