# Class: a DataLoader with pin_memory=True and large batches (128 MiB of float32 each): four workers
# hand out batches for free (a view of a tensor already in shared memory, line 13: only a handle
# crosses the process boundary), and the DataLoader's one pin-memory thread in the main process
# copies every batch into page-locked memory before the loop (line 20) gets it. That thread's
# copies are the bottleneck: the loop waits on its queue.  (Second version: the first one built
# each batch by collating 16 items, and the workers' collation into shared memory was what limited
# it — docs/gpu-runs.md section 28.  The expectation was written before the first and is unchanged.)
import time, torch
from torch.utils.data import DataLoader, Dataset
class DS(Dataset):
    def __init__(self): self.x = torch.rand(4, 32, 1024, 1024).share_memory_()
    def __len__(self): return 150
    def __getitem__(self, i): return self.x[i % 4]   # ITEM: a 128 MiB view of shared memory
if __name__ == "__main__":
    dl = DataLoader(DS(), batch_size=None, num_workers=4, pin_memory=True, persistent_workers=True, prefetch_factor=2)
    w = torch.randn(1024, 1024, device="cuda")
    t = time.time(); steps = 0
    for epoch in range(2):
        for b in dl:
            y = (b.cuda(non_blocking=True).view(-1, 1024) @ w).relu().sum()   # STEP
            steps += 1
    torch.cuda.synchronize(); print(f"c41 wall_s={time.time()-t:.3f} steps={steps}")
