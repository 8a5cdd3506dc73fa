# Class: data-parallel training (DDP over gloo) of two ranks on the one GPU under torchrun, rank 1's
# input slow: its DataLoader has 1 worker where rank 0's has 4, and every sample costs CPU work in
# __getitem__ (line 18). Started as plain `python3 c47_ddp_gloo_slow_rank.py`, it runs itself under torchrun.
import os, sys, time
if "LOCAL_RANK" not in os.environ:
    os.execvp(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc_per_node=2", sys.argv[0]])
import numpy as np, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
rank = dist.get_rank(); torch.cuda.set_device(0)

class DS(torch.utils.data.Dataset):
    def __len__(self): return 1 << 20
    def __getitem__(self, i):
        x = np.random.default_rng(i).standard_normal(1024).astype(np.float32)
        for _ in range(60):
            x = np.tanh(x * 1.01)   # the per-sample CPU work
        return torch.from_numpy(x), i % 10

loader = torch.utils.data.DataLoader(DS(), batch_size=64, num_workers=4 if rank == 0 else 1,
                                     persistent_workers=True, pin_memory=True)
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda(),
            device_ids=[0])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
t = time.time()
for step, (x, y) in enumerate(loader):
    if step == 120: break
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c47 rank {rank} wall_s={time.time()-t:.3f}")
dist.destroy_process_group()
