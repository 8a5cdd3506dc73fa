# Class: data-parallel training (DDP over gloo) of four ranks on the one GPU under torchrun, every rank's
# DataLoader with 2 workers, rank 3's samples through a CPU-heavy transform (line 19) that the others skip.
# Started as plain `python3 c48_ddp_gloo_4ranks_transform.py`, it runs itself under torchrun.
import os, sys, time
if "LOCAL_RANK" not in os.environ:
    os.execvp(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc_per_node=4", sys.argv[0]])
import numpy as np, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
rank = dist.get_rank(); torch.cuda.set_device(0)
HEAVY = rank == 3

class DS(torch.utils.data.Dataset):
    def __len__(self): return 1 << 20
    def __getitem__(self, i):
        x = np.random.default_rng(i).standard_normal(1024).astype(np.float32)
        for _ in range(120 if HEAVY else 4):
            x = np.tanh(x * 1.01)   # the transform: heavy on rank 3 only
        return torch.from_numpy(x), i % 10

loader = torch.utils.data.DataLoader(DS(), batch_size=64, num_workers=2, persistent_workers=True, pin_memory=True)
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda(),
            device_ids=[0])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
t = time.time()
for step, (x, y) in enumerate(loader):
    if step == 60: break                                  # (100 before: a trace smaller by a third)
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c48 rank {rank} wall_s={time.time()-t:.3f}")
dist.destroy_process_group()
