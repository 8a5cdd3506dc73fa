# Class: healthy, CUDA graphs. A whole training step (forward, backward, a capturable Adam) is
# captured once into a CUDA graph (torch.cuda.graph) and replayed every step: one launch a step,
# the GPU kept busy. The loss printed at the end must be the same traced and untraced.
import time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 8192),
                            torch.nn.ReLU(), torch.nn.Linear(8192, 2048)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-5, capturable=True)
data = [torch.randn(1024, 2048, device="cuda") for _ in range(4)]
sx = torch.zeros(1024, 2048, device="cuda")
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for i in range(3):   # warm-up on a side stream, as capture requires
        sx.copy_(data[i]); opt.zero_grad(set_to_none=True)
        model(sx).square().mean().backward(); opt.step()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph(); opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    sloss = model(sx).square().mean(); sloss.backward(); opt.step()
t = time.time()
for step in range(400):
    sx.copy_(data[step % 4]); g.replay()
torch.cuda.synchronize(); print(f"c17 wall_s={time.time()-t:.3f} loss={sloss.item():.6f}")
