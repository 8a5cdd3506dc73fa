# Class: torch.profiler left on around the whole training loop (line 14) from a debugging session,
# with record_shapes and with_stack: every operator is recorded with its shapes and its Python
# stack, CUPTI records every kernel, and on exit the profiler processes it all. The host's cost per
# operator multiplies while the GPU, whose work is small, waits.
import time, torch
from torch.profiler import profile, ProfilerActivity
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())]).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(256, 1024, device="cuda")
t = time.time()
acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
# left on from debugging, around every step
with profile(activities=acts, record_shapes=True, with_stack=True) as prof:
    for step in range(250):
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    torch.cuda.synchronize()
print(f"c66 wall_s={time.time()-t:.3f} events={len(prof.events())}")
