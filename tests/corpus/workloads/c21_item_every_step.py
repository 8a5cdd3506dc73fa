# Class: a host sync every step. A training loop reads loss.item() after every optimizer step (to
# log it), so the host waits for the GPU to finish the step before it queues the next one; the
# model's step is a few milliseconds of GPU work and about as much host time to issue.
import time, torch
layers = []
for _ in range(8):
    layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(256, 2048, device="cuda")
t = time.time(); losses = []
for step in range(500):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    losses.append(loss.item())
torch.cuda.synchronize(); print(f"c21 wall_s={time.time()-t:.3f} loss={losses[-1]:.6f}")
