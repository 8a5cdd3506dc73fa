# Class: a very deep, narrow transformer (128 pre-norm layers of width 256, dropout off) trained
# with fused AdamW on 4 x 64 tokens, no accumulation: each layer's kernels are a few microseconds,
# so the host's launches bound the step, and one step is ~6,000 CUDA calls (forward on the main
# thread, backward on autograd's) — more than the analyzer's first look for the step holds three
# of (20,000 calls, steps.h). Written before the trace (2026-12-08, fifty-seventh session).
import time, torch
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True, norm_first=True)
model = torch.nn.TransformerEncoder(layer, 128, enable_nested_tensor=False).cuda()
head = torch.nn.Linear(256, 256).cuda()
params = list(model.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
x = torch.randn(4, 64, 256, device="cuda")
t = time.time(); steps = 0
while time.time() - t < 4:
    loss = head(model(x)).pow(2).mean()
    loss.backward()
    opt.step(); opt.zero_grad(set_to_none=True)
    steps += 1
torch.cuda.synchronize(); print(f"c84 wall_s={time.time()-t:.3f} steps={steps}")
