# Class: an optimizer that launches per parameter. A 48-block MLP (LayerNorm + Linear(512, 512) + GELU:
# 194 parameter tensors) trained with AdamW(foreach=False) (line 12): every opt.step() (line 18) runs
# the single-tensor loop, about a dozen tiny kernels per parameter issued one by one from Python —
# ~2,300 launches — while forward and backward at batch 256 give the GPU well under a millisecond.
# An expert says: the host's launch rate bounds the step, and most launches are the optimizer's
# (torch/optim, _single_tensor_adam*); fix: foreach=True (PyTorch's default) or fused=True, which
# make the step a few multi-tensor kernels; capturing the step (CUDA graphs) also. Not the input
# pipeline (there is none), not a sync.
import time, torch
blocks = [m for _ in range(48) for m in (torch.nn.LayerNorm(512), torch.nn.Linear(512, 512), torch.nn.GELU())]
model = torch.nn.Sequential(*blocks, torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
x = torch.randn(256, 512, device="cuda"); y = torch.randint(0, 10, (256,), device="cuda")
t = time.time(); steps = 0
while time.time() - t < 3:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True); loss.backward()
    opt.step(); steps += 1
torch.cuda.synchronize(); print(f"c77 wall_s={time.time()-t:.3f} steps={steps}")
