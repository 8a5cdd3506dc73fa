# Class: data-parallel training (DDP over gloo) of a small transformer, two ranks on the one GPU under
# torchrun, the same model, batch size and DataLoader on both; but the data is sharded by document
# length: rank 1's shard holds sequences of 1,024 tokens where rank 0's hold 256 (line 16), so every
# step rank 1 queues about four times the GPU work. Started as plain `python3 c52_ddp_gloo_uneven_lengths.py`,
# it runs itself under torchrun.
import os, sys, time
if "LOCAL_RANK" not in os.environ:
    os.execvp(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc_per_node=2", sys.argv[0]])
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
rank = dist.get_rank(); torch.cuda.set_device(0)

class Shard(torch.utils.data.Dataset):
    def __init__(self, rank): self.seq = 1024 if rank == 1 else 256   # the shard's documents: long on rank 1
    def __len__(self): return 1 << 20
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, 2048, (self.seq,), generator=g), i % 10

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(2048, 256)
        self.enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True), 2)
        self.head = torch.nn.Linear(256, 10)
    def forward(self, x): return self.head(self.enc(self.emb(x)).mean(1))

loader = torch.utils.data.DataLoader(Shard(rank), batch_size=64, num_workers=2, persistent_workers=True, pin_memory=True)
model = DDP(Model().cuda(), device_ids=[0])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
t = time.time()
for step, (x, y) in enumerate(loader):
    if step == 120: break
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c52 rank {rank} wall_s={time.time()-t:.3f}")
dist.destroy_process_group()
