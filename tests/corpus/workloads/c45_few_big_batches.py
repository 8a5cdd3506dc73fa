# Class: a DataLoader run of only a few big batches. Two workers each build a 1 GiB batch with
# per-sample Python work (line 12: 64 samples of 4M float32, each filled in a Python loop over
# chunks), and the job does 6 steps; the GPU's work per batch is short. There is no repeating
# steady state to speak of: the whole run is the wait for the workers' batches. An expert says: the
# GPU waits for the DataLoader workers (more workers, a cheaper __getitem__) — not "start-up".
import time, torch
from torch.utils.data import DataLoader, Dataset
class DS(Dataset):
    def __len__(self): return 6 * 64
    def __getitem__(self, i):
        x = torch.empty(1 << 22)
        for c in range(0, 1 << 22, 1 << 10): x[c:c + (1 << 10)] = float(i)   # ITEM
        return x
if __name__ == "__main__":
    dl = DataLoader(DS(), batch_size=64, num_workers=2)
    w = torch.randn(1 << 12, 1 << 10, device="cuda")
    t = time.time(); steps = 0
    for b in dl:
        y = (b.cuda().view(-1, 1 << 12) @ w).sum()   # STEP
        steps += 1
    torch.cuda.synchronize(); print(f"c45 wall_s={time.time()-t:.3f} steps={steps}")
