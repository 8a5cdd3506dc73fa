# Class: many small host-to-device copies. Each step moves 200 small pinned tensors (a feature
# dictionary, 16 KiB each) to the GPU one by one with non_blocking=True before a small model
# uses them: hundreds of copy calls a step, each a few microseconds of host time, for little data.
import time, torch
feats = [torch.randn(64, 64).pin_memory() for _ in range(200)]
model = torch.nn.Sequential(torch.nn.Linear(64 * 200, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
t = time.time()
for step in range(400):
    dev = [f.cuda(non_blocking=True) for f in feats]
    x = torch.cat([d.reshape(64, -1) for d in dev], dim=1)
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c28 wall_s={time.time()-t:.3f} loss={loss.item():.6f}")
