# Class: healthy, GPU-bound, launched by torchrun (one process per GPU: an elastic agent that runs
# no CUDA, and its worker, which trains). A bf16 MLP trained with a fused AdamW; the loss is read
# every 50 steps. Started as plain `python3 c19_torchrun_single.py`, it runs itself under torchrun.
import os, sys, time
if "LOCAL_RANK" not in os.environ:
    os.execvp(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc_per_node=1", sys.argv[0]])
import torch
rank = int(os.environ.get("LOCAL_RANK", "0")); torch.cuda.set_device(rank)
model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(8192, 4096, device="cuda")
t = time.time()
for step in range(400):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    if step % 50 == 0: print(f"rank {rank} step {step} loss {loss.item():.4f}")
torch.cuda.synchronize(); print(f"c19 wall_s={time.time()-t:.3f}")
