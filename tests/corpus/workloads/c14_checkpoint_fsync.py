# Class: storage I/O in the training loop. Every 10 steps the main thread saves the model's state
# to a file on the working directory's disk and fsyncs it before it queues the next step.
import os, time, torch
model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(1024, 2048, device="cuda"); path = os.path.abspath("c14.ckpt")
t = time.time()
for step in range(400):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    if step % 10 == 0:
        with open(path, "wb") as f:
            torch.save(model.state_dict(), f); f.flush(); os.fsync(f.fileno())
torch.cuda.synchronize(); os.unlink(path); print(f"c14 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
