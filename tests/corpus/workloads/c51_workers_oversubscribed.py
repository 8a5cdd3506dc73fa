# Class: DataLoader oversubscribed by the job itself: twice as many workers as CPUs (32 on the
# H200's 16), each item a CPU-heavy pure-Python transform (line 14), a small model. Every CPU is
# busy with the job's own workers; the loop waits for batches, and once woken it waits again for
# a CPU behind those same workers (and so does the pin-memory thread).
import os, time, torch
from torch.utils.data import Dataset, DataLoader
class Rows(Dataset):
    def __len__(self): return 64 * 370   # one epoch (half of the 740 before: a trace half the size); see the end
    def __getitem__(self, i):
        v = torch.empty(256)
        acc = i
        for k in range(256):
            for _ in range(40):
                acc = (acc * 1103515245 + 12345) & 0x7fffffff   # the transform: pure Python per value
            v[k] = acc / 0x7fffffff
        return v, i % 10
if __name__ == "__main__":
    n = 2 * os.cpu_count()
    net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    dl = DataLoader(Rows(), batch_size=64, num_workers=n, pin_memory=True, persistent_workers=True)
    t = time.time(); steps = 0
    for x, y in dl:
        loss = torch.nn.functional.cross_entropy(net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
    torch.cuda.synchronize(); print(f"c51 wall_s={time.time()-t:.3f} steps={steps} workers={n}")
    del dl   # its persistent workers shut down now, while the queues' feeder threads still run (below)
# The trace in tests/corpus was made by a version that left this loop after 15 s: 32 workers stayed
# blocked on a full queue and DataLoader's shutdown (5 s a worker) hung the exit; it ends its epoch now.
# Section 56 (docs/gpu-runs.md): even so its 32 workers exited one every 5.0 s after the loop —
# DataLoader's join timeout. Likely: persistent workers shut down from the iterator's __del__ at interpreter
# exit, when the index queues' feeder threads no longer run, never get their stop and are
# terminated one by one; `del dl` shuts them down before (to be seen at its next collection).
