# Class: healthy data loading. 8 DataLoader workers (persistent, pinned, prefetching) build items
# with real per-item CPU work for a model whose step is longer than a batch's preparation on 8
# CPUs of 16: the workers keep up and the GPU is busy.
import time, torch
from torch.utils.data import Dataset, DataLoader
class Rows(Dataset):
    def __len__(self): return 300_000
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        v = torch.rand(1024, generator=g)
        for _ in range(2): v = (v - v.mean()) / (v.std() + 1e-6)
        return v, i % 10
if __name__ == "__main__":
    net = torch.nn.Sequential(torch.nn.Linear(1024, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 8192),
                              torch.nn.ReLU(), torch.nn.Linear(8192, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    dl = DataLoader(Rows(), batch_size=512, num_workers=8, pin_memory=True, persistent_workers=True,
                    prefetch_factor=4)
    t = time.time()
    for x, y in dl:
        loss = torch.nn.functional.cross_entropy(net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); print(f"c23 wall_s={time.time()-t:.3f}")
