# Class: a training loop with autograd's anomaly detection left on from debugging (line 10): each
# operation of the forward records the Python traceback that created it, and the backward checks
# every gradient it computes for NaN; the host's cost per operation multiplies while the GPU,
# whose work is small, waits.
import time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(8) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())]).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(256, 1024, device="cuda")
torch.autograd.set_detect_anomaly(True)                    # left on from debugging
t = time.time()
for step in range(300):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c65 wall_s={time.time()-t:.3f}")
