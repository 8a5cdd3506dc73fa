# Class: healthy, GPU-bound mixed precision. A stack of 8192-wide Linear layers trained under
# torch.autocast(bfloat16) with a fused AdamW on a batch of 8192: each step is tens of
# milliseconds of tensor-core GEMMs, queued in a fraction of that; no sync in the loop until the
# end. An expert says: healthy, the GPU is busy with its matrix products; nothing to fix on the host.
import time, torch
layers = []
for _ in range(4):
    layers += [torch.nn.Linear(8192, 8192), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(8192, 8192, device="cuda")
t = time.time()
for step in range(150):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c31 wall_s={time.time()-t:.3f} loss={loss.item():.6f}")
