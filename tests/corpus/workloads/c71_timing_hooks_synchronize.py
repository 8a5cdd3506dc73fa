# Class: timing code left in the training loop. Forward hooks on every layer time it the usual
# way: torch.cuda.synchronize() then time.perf_counter() (line 15), before and after each of the
# 24 layers. Each synchronize waits for the GPU to finish everything queued, so the queue never
# holds more than one layer: the GPU idles while the host returns, reads the clock, and queues the
# next layer's kernels.
import collections, time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU())
                              for _ in range(24)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
layer_ms = collections.defaultdict(float)
started = {}

def clock():
    torch.cuda.synchronize()
    return time.perf_counter()                              # wait, then read the clock
def before(mod, inp):
    started[mod] = clock()
def after(mod, inp, out):
    layer_ms[mod] += (clock() - started[mod]) * 1e3
for layer in model:
    layer.register_forward_pre_hook(before)
    layer.register_forward_hook(after)

x = torch.randn(512, 1024, device="cuda")
t = time.time()
for step in range(400):
    loss = model(x).pow(2).mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize()
print(f"c71 wall_s={time.time()-t:.3f} slowest_layer_ms={max(layer_ms.values()):.1f}")
