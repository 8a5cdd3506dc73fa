# Class: the caching allocator turned off. PYTORCH_NO_CUDA_MEMORY_CACHING=1 (a debugging setting
# left on) makes every tensor's memory a cudaMalloc and every release a cudaFree, which waits for
# the GPU: a small MLP's training step then frees and allocates its activations and gradients.
import os
os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
import time, torch
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(512, 1024, device="cuda")
t = time.time()
for step in range(1000):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c24 wall_s={time.time()-t:.3f} loss={loss.item():.6f}")
