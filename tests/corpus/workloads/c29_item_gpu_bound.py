# Class: a host sync every step in a GPU-bound loop. Four 4096-wide Linear layers on a batch of
# 4096 read loss.item() after every optimizer step (line 15): each step's matrix products are tens
# of milliseconds of GPU work against about a millisecond of host time to issue them, so the sync
# costs the GPU only the moment the host takes to queue the next step's first kernels. An expert
# says: GPU-bound, the per-step .item() is harmless here; the GEMMs are the run's time.
import time, torch
layers = []
for _ in range(4):
    layers += [torch.nn.Linear(4096, 4096), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(4096, 4096, device="cuda")
t = time.time(); losses = []
for step in range(200):
    loss = model(x).square().mean(); opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); losses.append(loss.item())
torch.cuda.synchronize(); print(f"c29 wall_s={time.time()-t:.3f} loss={losses[-1]:.6f}")
