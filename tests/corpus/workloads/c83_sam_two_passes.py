# Class: sharpness-aware minimization (SAM) as its reference code writes it: every step two
# forward and backward passes over the same batch — the first (line 17) at the weights, the second
# (line 23) at the weights pushed up the gradient by rho — and one optimizer step (line 26), a
# small model at batch 128. Two backward passes a step, each after a forward of its own, the same
# length — yet not gradient accumulation: the second pass needs the first's gradient.
import time, torch
model = torch.nn.Sequential(*[m for _ in range(8) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())],
                            torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
params = list(model.parameters())
x = torch.randn(128, 512, device="cuda"); y = torch.randint(0, 10, (128,), device="cuda")
rho = 0.05
t = time.time(); steps = 0
while time.time() - t < 2:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()                                              # the first pass
    with torch.no_grad():
        norm = torch.norm(torch.stack([p.grad.norm() for p in params]))
        eps = [p.grad * (rho / (norm + 1e-12)) for p in params]
        torch._foreach_add_(params, eps)
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()    # the second, at the pushed weights
    with torch.no_grad():
        torch._foreach_sub_(params, eps)
    opt.step()
    steps += 1
torch.cuda.synchronize(); print(f"c83 wall_s={time.time()-t:.3f} steps={steps}")
