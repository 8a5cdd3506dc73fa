# Class: data-parallel training started the way many tutorials start it: torch.multiprocessing.spawn
# (mp.spawn(train, nprocs=2), line 39) — each rank gets its number as an argument, no RANK or
# WORLD_SIZE in its environment — DDP over gloo on the one GPU, rank 1's input slow: its DataLoader
# has 1 worker where rank 0's has 4, every sample costs CPU work in __getitem__ (line 14).
import os, time
import numpy as np, torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

class DS(torch.utils.data.Dataset):
    def __len__(self): return 1 << 20
    def __getitem__(self, i):
        x = np.random.default_rng(i).standard_normal(1024).astype(np.float32)
        for _ in range(60):
            x = np.tanh(x * 1.01)
        return torch.from_numpy(x), i % 10

def train(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.cuda.set_device(0)
    loader = torch.utils.data.DataLoader(DS(), batch_size=64, num_workers=4 if rank == 0 else 1,
                                         persistent_workers=True, pin_memory=True)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 10)).cuda(), device_ids=[0])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    t = time.time()
    for step, (x, y) in enumerate(loader):
        if step == 120: break
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); print(f"c73 rank {rank} wall_s={time.time()-t:.3f}")
    dist.destroy_process_group()

if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29513")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        os.environ.pop(k, None)
    mp.spawn(train, args=(2,), nprocs=2)
