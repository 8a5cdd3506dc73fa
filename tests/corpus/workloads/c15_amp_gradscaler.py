# Class: a host sync inside GradScaler. Mixed-precision training with torch.amp.GradScaler and an
# AdamW without fused=True: scaler.step reads the inf check on the host (.item()) every step, so the
# host waits for the GPU to drain before it queues the optimizer's kernels and the next step.
import time, torch
layers = []
for _ in range(12):
    layers += [torch.nn.Linear(1024, 1024), torch.nn.GELU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
scaler = torch.amp.GradScaler("cuda")
x = torch.randn(4096, 1024, device="cuda"); y = torch.randint(0, 10, (4096,), device="cuda")
t = time.time()
for step in range(600):
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt); scaler.update()
torch.cuda.synchronize(); print(f"c15 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
