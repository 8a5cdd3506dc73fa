# Class: device memory handed back every step. A training loop calls torch.cuda.empty_cache() after
# each optimizer step: the caching allocator frees its cached blocks (cudaFree waits for the GPU)
# and the next step has to allocate them again (cudaMalloc). The gradients are dropped (set to
# None) before it, so their blocks are free for it to hand back.
import time, torch
model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                            torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(256, 2048, device="cuda"); y = torch.randint(0, 10, (256,), device="cuda")
t = time.time()
for step in range(1500):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    torch.cuda.empty_cache()
torch.cuda.synchronize(); print(f"c13 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
