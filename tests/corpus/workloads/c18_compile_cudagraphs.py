# Class: torch.compile with CUDA graphs (mode="reduce-overhead"). A training step's forward and
# backward compiled by Inductor and replayed as CUDA graphs; each step keeps the GPU busy (~8 ms).
import time, torch
model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                            torch.nn.ReLU(), torch.nn.Linear(4096, 2048)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
cmodel = torch.compile(model, mode="reduce-overhead")
x = torch.randn(2048, 2048, device="cuda")
t = time.time()
for step in range(300):
    torch.compiler.cudagraph_mark_step_begin()
    loss = cmodel(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c18 wall_s={time.time()-t:.3f} loss={loss.item():.6f}")
