# Class: an exponential moving average of the weights kept the way many diffusion and
# self-supervised training scripts write it: after every optimizer step, a Python loop over the
# model's parameters (line 19) does ema.mul_(decay).add_(p, alpha=1 - decay) — two tiny kernels
# per parameter tensor, ~390 launches a step from the user's own code — while the optimizer is
# fused AdamW (a few kernels) and forward and backward at batch 128 give the GPU little work.
import copy, time, torch
blocks = [m for _ in range(48) for m in (torch.nn.LayerNorm(512), torch.nn.Linear(512, 512), torch.nn.GELU())]
model = torch.nn.Sequential(*blocks, torch.nn.Linear(512, 10)).cuda()
ema = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(128, 512, device="cuda"); y = torch.randint(0, 10, (128,), device="cuda")
decay = 0.999
t = time.time(); steps = 0
while time.time() - t < 3:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(decay).add_(p, alpha=1 - decay)
    steps += 1
torch.cuda.synchronize(); print(f"c81 wall_s={time.time()-t:.3f} steps={steps}")
