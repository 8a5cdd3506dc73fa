# Class: a compiled model whose forward reads a value on the host every step: torch.compile(model)
# where forward() logs the activations' mean with .item() (line 18). Dynamo breaks the graph there:
# two compiled graphs a step with eager Python between them, and the .item() waits for the GPU to
# finish the first graph before the second is queued. The step is small, so the wait and the
# refill after it are a large share of it.
import time, warnings
warnings.filterwarnings("ignore")
import torch
torch.manual_seed(0)

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)])
        self.b = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)])
    def forward(self, x):
        h = torch.relu(self.a(x))
        self.last_mean = h.mean().item()                     # a value logged on the host each step
        return self.b(h)

model = torch.compile(Net().cuda())
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(2048, 2048, device="cuda")
for _ in range(3):                                          # compile outside the timed loop
    model(x).square().mean().backward()
t = time.time()
for step in range(300):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c69 wall_s={time.time()-t:.3f}")
