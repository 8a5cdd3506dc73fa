# Class: c69 at a step the sync can starve: torch.compile(model) where forward() reads the
# activations' mean on the host with .item() (line 18), now with 512-wide layers and a batch of
# 256, so each compiled graph is a few small kernels. Dynamo breaks the graph at the .item(): the
# host waits for the first graph to finish before it queues the second, every step, and the GPU
# idles while the host runs the eager Python between the graphs and queues the rest.
import time, warnings
warnings.filterwarnings("ignore")
import torch
torch.manual_seed(0)

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(4)])
        self.b = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(4)])
    def forward(self, x):
        h = torch.relu(self.a(x))
        self.last_mean = h.mean().item()                     # a value logged on the host each step
        return self.b(h)

model = torch.compile(Net().cuda())
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(256, 512, device="cuda")
for _ in range(3):                                          # compile outside the timed loop
    model(x).square().mean().backward()
t = time.time()
for step in range(1500):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c72 wall_s={time.time()-t:.3f}")
