# Class: healthy, a well-fed pipeline. Batches come from pinned host memory, copied with
# non_blocking=True on a side stream one step ahead of the compute that uses them; the GPU's
# matrix products dominate each step and the host never waits.
import time, torch
model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 4096)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
host = [torch.randn(4096, 4096).pin_memory() for _ in range(4)]
copy = torch.cuda.Stream()
def fetch(i):
    with torch.cuda.stream(copy):
        b = host[i % 4].cuda(non_blocking=True); ev = torch.cuda.Event(); ev.record(copy)
    return b, ev
t = time.time(); nxt = fetch(0)
for step in range(200):
    xb, ev = nxt; torch.cuda.current_stream().wait_event(ev); xb.record_stream(torch.cuda.current_stream())
    nxt = fetch(step + 1)
    loss = model(xb).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c22 wall_s={time.time()-t:.3f} loss={loss.item():.6f}")
