# Class: a one-rank NCCL process group (world size 1) under torchrun: DDP over NCCL and an explicit
# all_reduce of the loss every step — real NCCL calls (ncclCommInitRankConfig, ncclAllReduce on PyTorch's
# NCCL stream) from one process; a GPU-bound bf16 MLP otherwise, healthy.
# Started as plain `python3 c50_nccl_world1.py`, it runs itself under torchrun.
import os, sys, time
if "LOCAL_RANK" not in os.environ:
    os.execvp(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc_per_node=1", sys.argv[0]])
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
torch.cuda.set_device(0)
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
model = DDP(torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096)).cuda(),
            device_ids=[0])
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(8192, 4096, device="cuda")
t = time.time()
for step in range(200):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    l = loss.detach().clone(); dist.all_reduce(l)
    if step % 50 == 0: print(f"step {step} loss {l.item():.4f}")
torch.cuda.synchronize(); print(f"c50 wall_s={time.time()-t:.3f}")
dist.destroy_process_group()
