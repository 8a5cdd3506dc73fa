# Class: host-to-device copies from pageable memory. Each step copies a 64 MiB batch from an
# ordinary (not pinned) CPU tensor with .cuda(); the model's work on it is small.
import time, torch
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
batches = [torch.randn(16384, 1024) for _ in range(4)]
t = time.time()
for step in range(300):
    xb = batches[step % 4].cuda()
    loss = model(xb).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c16 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
