# Class: host-bound, a sync only now and then. The model of c21 (eight 2048-wide Linear layers,
# AdamW, a batch of 256), but the loss is read every 10th step (line 17): the host no longer drains
# the GPU each step, and the step's ~2.4 ms of GPU work against ~3 ms of host time to issue it
# leaves the GPU idling between launches — the host's issue rate sets the pace. An expert says:
# host-bound; fewer launches (CUDA graphs, torch.compile, a fused optimizer); the sync every 10
# steps is not the problem.
import time, torch
layers = []
for _ in range(8):
    layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(256, 2048, device="cuda")
t = time.time(); losses = []
for step in range(1500):
    loss = model(x).square().mean(); opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    if step % 10 == 0: losses.append(loss.item())
torch.cuda.synchronize(); print(f"c30 wall_s={time.time()-t:.3f} loss={losses[-1]:.6f}")
