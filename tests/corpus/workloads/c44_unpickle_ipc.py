# Class: unpickling-heavy IPC. Four DataLoader workers return each batch as plain Python lists
# (200,000 floats per sample, the collate function keeping them as lists, line 11), so every
# batch crosses from a worker to the main process pickled; the main thread unpickles it in the
# DataLoader's queue get, then converts it with torch.tensor (line 18). The workers keep up; the
# main thread's own unpickling and conversion are the gaps. An expert says: send tensors or numpy
# arrays (shared memory, no per-element pickling) instead of Python lists.
import time, torch
from torch.utils.data import DataLoader, Dataset
class DS(Dataset):
    def __len__(self): return 640
    def __getitem__(self, i): return [float(i)] * 200_000   # ITEM
def keep_lists(batch): return batch
if __name__ == "__main__":
    dl = DataLoader(DS(), batch_size=4, num_workers=4, collate_fn=keep_lists, persistent_workers=True)
    w = torch.randn(200_000, 64, device="cuda")
    t = time.time(); steps = 0
    for b in dl:
        x = torch.tensor(b, device="cuda")   # STEP
        y = (x @ w).relu().sum()
        steps += 1
    torch.cuda.synchronize(); print(f"c44 wall_s={time.time()-t:.3f} steps={steps}")
